// The channel-blocked ops against plain references: BlockedConv against the direct-loop
// convolution (scalar, in double) over stems, 1x1 and 3x3 windows, strides, pads, dilations,
// several weight groups and input chunks, residuals, activations and threads; the reorders against
// a scalar index formula; the blocked pools against MaxPool / AveragePool / the global pools.
#include <cmath>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include <gtest/gtest.h>
#include <hwy/targets.h>

#include "ops/blocked/blocked_conv.h"
#include "ops/blocked/blocked_conv_plan.h"
#include "ops/blocked/blocked_conv_tile.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/blocked_test_util.h"
#include "ops/blocked/register.h"
#include "ops/blocked/reorder.h"
#include "ops/blocked/winograd.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/framework/testing.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/fused_activation.h"
#include "ops/math/gemm.h"
#include "ops/nn/register.h"

namespace onnxflow {
namespace {

using blocked_test::Random;
using blocked_test::RunOne;
using blocked_test::ToBlockedRef;

// Runs `body` once on each compiled Highway target (AVX-512, AVX2, SSE4 and the portable one, as
// far as the CPU has them): every blocked kernel is SIMD code dispatched per target.
void OnEveryTarget(void (*body)()) {
  for (int64_t target : hwy::SupportedAndGeneratedTargets()) {
    hwy::SetSupportedTargetsForTest(target);
    SCOPED_TRACE(hwy::TargetName(target));
    body();
    if (::testing::Test::HasFatalFailure()) break;
  }
  hwy::SetSupportedTargetsForTest(0);
}

// A test whose body runs on every compiled target.
#define TARGETS_TEST(suite, name)                                    \
  void suite##_##name##_Body();                                      \
  TEST(suite, name) { OnEveryTarget(&suite##_##name##_Body); }       \
  void suite##_##name##_Body()




struct ConvCase {
  Shape x, w;
  std::vector<int64_t> strides, pads, dilations;
  bool bias = true;
  bool residual = false;
  std::string activation;
  int threads = 1;
  int64_t group = 1;
};

// BlockedConv of case `cs` with weights `w`, on the case's X, B and Z (Random, seeds 1, 3, 4).
void SetUpConv(const ConvCase& cs, const Tensor& w, OpTest* test) {
  ConvAttributes attrs;
  attrs.strides = cs.strides;
  attrs.pads = cs.pads;
  attrs.dilations = cs.dilations;
  attrs.group = cs.group;
  const Shape y_shape = ComputeConvGeometry(attrs, cs.x, cs.w).value().output_shape();
  const Tensor x_nchw = Tensor::FromVector<float>(cs.x, Random(ElementCount(cs.x), 1));
  const bool stem = cs.x[1] < kChannelBlock;
  test->Input(stem ? x_nchw : ToBlockedRef(x_nchw)).Input(w).ConstantInput(1);
  if (cs.bias) {
    test->Input(Tensor::FromVector<float>({cs.w[0]}, Random(cs.w[0], 3))).ConstantInput(2);
  } else if (cs.residual) {
    test->AbsentInput();
  }
  if (cs.residual) test->Input(ToBlockedRef(Tensor::FromVector<float>(y_shape, Random(ElementCount(y_shape), 4))));
  if (!cs.strides.empty()) test->Attr("strides", cs.strides);
  if (!cs.pads.empty()) test->Attr("pads", cs.pads);
  if (!cs.dilations.empty()) test->Attr("dilations", cs.dilations);
  if (!cs.activation.empty()) test->Attr("activation", cs.activation);
  if (cs.group != 1) test->Attr("group", cs.group);
  test->Threads(cs.threads);
}

void RunConvCase(const ConvCase& cs) {
  SCOPED_TRACE("X " + ShapeToString(cs.x) + " W " + ShapeToString(cs.w));
  const std::vector<float> x = Random(ElementCount(cs.x), 1), w = Random(ElementCount(cs.w), 2),
                           b = Random(cs.w[0], 3);
  ConvAttributes attrs;
  attrs.strides = cs.strides;
  attrs.pads = cs.pads;
  attrs.dilations = cs.dilations;
  attrs.group = cs.group;
  const ConvGeometry g = ComputeConvGeometry(attrs, cs.x, cs.w).value();
  const std::vector<float> z = Random(ElementCount(g.output_shape()), 4);
  const ActivationSpec act = FusedActivationSpec::Named(cs.activation).value().activation;

  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end()), bd(b.begin(), b.end());
  std::vector<double> yd(static_cast<size_t>(ElementCount(g.output_shape())));
  DirectConv<double, double, double>(g, xd.data(), wd.data(), cs.bias ? bd.data() : nullptr, 0.0, nullptr, yd.data());
  std::vector<float> expected(yd.size());
  for (size_t i = 0; i < yd.size(); ++i) {
    expected[i] = ActivationScalar(act, static_cast<float>(yd[i] + (cs.residual ? z[i] : 0.0)));
  }

  OpTest test("BlockedConv", 1, "com.onnxflow");
  SetUpConv(cs, Tensor::FromVector<float>(cs.w, w), &test);
  const Tensor want = ToBlockedRef(Tensor::FromVector<float>(g.output_shape(), expected));
  Result<Tensor> y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  // 3x3 windows of stride 1 run as Winograd F(4x4, 3x3) (winograd.h): within 1e-4 of the outputs'
  // scale rather than of each output (measured: at most 6e-5 here, over 5760 terms).
  const bool winograd = WinogradConv::Applies(attrs, cs.w);
  double squares = 0;
  for (float v : expected) squares += static_cast<double>(v) * v;
  const double rms = std::sqrt(squares / std::max<size_t>(1, expected.size()));
  EXPECT_TRUE(TensorsNear(want, *y, 1e-4, winograd ? 1e-4 * std::max(1.0, rms) : 1e-4));
  EXPECT_FALSE(test.WroteInto(3, 0)) << "Z is the caller's";
  if (cs.residual) {  // Z that no one else reads: the sum overwrites it, to the same values
    test.ReusableInput(3);
    Result<Tensor> in_place = RunOne(test);
    ASSERT_TRUE(in_place.ok()) << in_place.status().ToString();
    EXPECT_TRUE(test.WroteInto(3, 0));
    EXPECT_TRUE(TensorsEqual(*y, *in_place));
  }
}

TARGETS_TEST(BlockedConvTest, Pointwise) {
  RunConvCase({{1, 16, 5, 7}, {16, 16, 1, 1}});
  RunConvCase({{2, 32, 3, 3}, {48, 32, 1, 1}, {}, {}, {}, false});
  RunConvCase({{1, 160, 4, 5}, {80, 160, 1, 1}, {}, {}, {}, true, false, "Relu"});
  RunConvCase({{1, 64, 8, 8}, {128, 64, 1, 1}, {2, 2}});
}

TARGETS_TEST(BlockedConvTest, Windows) {
  RunConvCase({{1, 16, 13, 13}, {64, 16, 3, 3}, {}, {1, 1, 1, 1}});
  RunConvCase({{1, 48, 9, 11}, {80, 48, 3, 3}, {}, {1, 1, 1, 1}, {}, true, false, "Relu"});
  // 640 channels of 3x3 taps are 1.4 MB of weights per group: several chunks of input blocks
  // (half of L2 each) on any core with less than 2.8 MB of L2, each adding into the tiles the
  // chunk before wrote. 80 output channels are a group of 64 and one of 16.
  RunConvCase({{1, 640, 4, 5}, {80, 640, 3, 3}, {}, {1, 1, 1, 1}, {}, true, false, "Relu"});
  RunConvCase({{1, 32, 15, 14}, {32, 32, 3, 3}, {2, 2}, {1, 0, 1, 0}});
  RunConvCase({{2, 16, 10, 10}, {16, 16, 3, 3}, {}, {2, 2, 2, 2}, {2, 2}});
  RunConvCase({{1, 16, 7, 7}, {32, 16, 5, 5}, {1, 2}, {2, 1, 0, 2}});
}

// Grouped convolutions (BlockedConvRunsGroups): groups narrower than a block (4 and 8 channels,
// one with pad lanes: 104 = 13 groups of 8), of a block, and of two and four blocks (one output
// group of 32 or 64 channels reading its 2 or 4 input blocks); strides, a residual, two threads.
TARGETS_TEST(BlockedConvTest, Groups) {
  RunConvCase({{1, 32, 9, 9}, {32, 4, 3, 3}, {}, {1, 1, 1, 1}, {}, true, false, "Relu", 1, 8});
  RunConvCase({{1, 104, 10, 9}, {104, 8, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, false, "Relu", 2, 13});
  RunConvCase({{2, 64, 7, 7}, {64, 16, 3, 3}, {}, {1, 1, 1, 1}, {}, true, true, "", 1, 4});
  RunConvCase({{1, 128, 6, 5}, {128, 32, 3, 3}, {}, {1, 1, 1, 1}, {}, false, true, "Relu", 2, 4});
  RunConvCase({{1, 128, 8, 8}, {128, 64, 1, 1}, {2, 2}, {}, {}, true, false, "", 1, 2});
  ConvAttributes attrs;
  attrs.group = 8;
  EXPECT_FALSE(WinogradConv::Applies(attrs, {32, 4, 3, 3}));
}

TEST(BlockedConvTest, GroupsItRuns) {
  EXPECT_TRUE(BlockedConvRunsGroups(1, {64, 3, 7, 7}));
  EXPECT_TRUE(BlockedConvRunsGroups(32, {128, 4, 3, 3}));     // ResNeXt 32x4d
  EXPECT_TRUE(BlockedConvRunsGroups(13, {104, 8, 3, 3}));     // RegNet, pad lanes
  EXPECT_TRUE(BlockedConvRunsGroups(16, {1024, 64, 3, 3}));   // whole blocks, at most 64
  EXPECT_FALSE(BlockedConvRunsGroups(8, {1024, 128, 3, 3}));  // groups wider than 64
  EXPECT_FALSE(BlockedConvRunsGroups(16, {256, 24, 3, 3}));   // 24 neither divides nor fills blocks
  EXPECT_FALSE(BlockedConvRunsGroups(32, {64, 4, 3, 3}));     // 2 outputs per group of 4 inputs
  EXPECT_FALSE(BlockedConvRunsGroups(64, {64, 1, 3, 3}));     // depthwise: its own kernel
  EXPECT_FALSE(BlockedConvRunsGroups(2, {8, 4, 3, 3}));       // 8 channels: less than a block
}

// Taps that read only padding for a whole tile are skipped (BlockedTile::live_taps): an ASPP
// head's dilations past the map (only the centre tap ever reads the image), dilations that leave
// a few taps inside at the map's edges, and tiles whose every tap is padding (pads past the
// kernel: those pixels are bias, residual and activation alone).
TARGETS_TEST(BlockedConvTest, TapsInThePaddingOnly) {
  RunConvCase({{1, 32, 5, 5}, {48, 32, 3, 3}, {}, {8, 8, 8, 8}, {8, 8}, true, false, "Relu"});
  RunConvCase({{1, 32, 7, 7}, {80, 32, 3, 3}, {}, {6, 6, 6, 6}, {6, 6}, true, true, "Relu", 2});
  RunConvCase({{1, 16, 3, 3}, {32, 16, 5, 5}, {}, {6, 6, 6, 6}, {}, true, true, "Relu"});
}

TARGETS_TEST(BlockedConvTest, Stems) {
  RunConvCase({{1, 3, 23, 21}, {64, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {}, true, false, "Relu"});
  RunConvCase({{2, 3, 17, 17}, {96, 3, 3, 3}, {2, 2}});
  RunConvCase({{1, 3, 160, 150}, {16, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, false, "Relu", 2});  // rows split over cores
  RunConvCase({{1, 1, 6, 6}, {16, 1, 3, 3}, {}, {1, 1, 1, 1}});
  // Each task interleaves only the rows its tiles read: ranges that start mid-row, a dilated
  // window reaching rows below, bottom padding, two images, on two cores.
  RunConvCase({{2, 3, 61, 67}, {16, 3, 3, 3}, {}, {2, 1, 3, 2}, {2, 2}, true, true, "Relu", 2});
  RunConvCase({{1, 4, 97, 45}, {32, 4, 5, 5}, {3, 1}, {2, 2, 2, 2}, {}, false, false, "", 2});
  // A pointwise stem: runs of whole tiles at its own pixel stride (4 floats), then a partial tile.
  RunConvCase({{1, 4, 7, 9}, {24, 4, 1, 1}, {}, {}, {}, true, true, "Relu"});
}

TARGETS_TEST(BlockedConvTest, ResidualAndThreads) {
  RunConvCase({{1, 32, 9, 9}, {32, 32, 3, 3}, {}, {1, 1, 1, 1}, {}, true, true, "Relu"});
  RunConvCase({{1, 64, 14, 14}, {64, 64, 1, 1}, {}, {}, {}, false, true, "", 2});
  RunConvCase({{1, 64, 28, 28}, {128, 64, 3, 3}, {}, {1, 1, 1, 1}, {}, true, false, "Relu", 2});
  // Winograd on two cores, ranges outside: 3 groups (the last one partial) x 2 ranges of 64 tiles.
  RunConvCase({{1, 48, 30, 31}, {160, 48, 3, 3}, {}, {1, 1, 1, 1}, {}, true, true, "Relu", 2});
  RunConvCase({{1, 3, 56, 56}, {64, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {}, true, false, "Relu", 2});
}

// A NaN in the input stays NaN through a fused Relu or Clip (activate-inl.h's MaxKeepNaN): the
// same outputs are NaN with the activation as without, in a pointwise, a Winograd and a stem
// convolution.
TARGETS_TEST(BlockedConvTest, FusedActivationsKeepNaN) {
  const ConvCase cases[] = {{{1, 16, 5, 7}, {16, 16, 1, 1}}, {{1, 32, 9, 9}, {32, 32, 3, 3}, {}, {1, 1, 1, 1}},
                            {{1, 3, 11, 11}, {16, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}}};
  for (const ConvCase& cs : cases) {
    std::vector<int64_t> nan_count;
    for (const char* activation : {"", "Relu", "Clip"}) {
      std::vector<float> x = Random(ElementCount(cs.x), 1);
      x[x.size() / 2] = std::numeric_limits<float>::quiet_NaN();
      const Tensor x_nchw = Tensor::FromVector<float>(cs.x, x);
      OpTest test("BlockedConv", 1, "com.onnxflow");
      test.Input(cs.x[1] < kChannelBlock ? x_nchw : ToBlockedRef(x_nchw))
          .Input(Tensor::FromVector<float>(cs.w, Random(ElementCount(cs.w), 2)))
          .ConstantInput(1);
      if (!cs.strides.empty()) test.Attr("strides", cs.strides);
      if (!cs.pads.empty()) test.Attr("pads", cs.pads);
      if (*activation != '\0') test.Attr("activation", std::string(activation));
      if (std::string(activation) == "Clip") test.Attr("activation_alpha", -0.5f).Attr("activation_beta", 0.5f);
      Result<Tensor> y = RunOne(test);
      ASSERT_TRUE(y.ok()) << y.status().ToString();
      int64_t nans = 0;
      for (int64_t i = 0; i < y->size(); ++i) nans += std::isnan(y->data<float>()[i]) ? 1 : 0;
      nan_count.push_back(nans);
    }
    EXPECT_GT(nan_count[0], 0) << ShapeToString(cs.w);
    EXPECT_EQ(nan_count[1], nan_count[0]) << "Relu, W " << ShapeToString(cs.w);
    EXPECT_EQ(nan_count[2], nan_count[0]) << "Clip, W " << ShapeToString(cs.w);
  }
}

// 3x3 stride-1 windows run as Winograd F(4x4, 3x3) up to 256x256 channels and directly past
// them: maps that are not whole 4x4 tiles, asymmetric pads, two images, a group of 64 output
// channels and one of 16, a residual, two threads; and one layer over the weight budget.
// Winograd's float error (winograd-inl.h's points 0, 1, -1, 1/2, -2): 64 -> 64 channels on 26 x 26
// against the convolution in double, the largest as a share of the outputs' rms. Measured 1.1e-5
// on AVX-512 and 8.6e-6 on the other targets; Lavin & Gray's points 0, +-1, +-2 gave 2.5e-5 and
// 2.4e-5.
TARGETS_TEST(BlockedConvTest, WinogradErrorStaysSmall) {
  const ConvCase cs = {{1, 64, 26, 26}, {64, 64, 3, 3}, {}, {1, 1, 1, 1}, {}, false};
  ConvAttributes attrs;
  attrs.pads = cs.pads;
  ASSERT_TRUE(WinogradConv::Applies(attrs, cs.w));
  const ConvGeometry g = ComputeConvGeometry(attrs, cs.x, cs.w).value();
  const std::vector<float> x = Random(ElementCount(cs.x), 1), w = Random(ElementCount(cs.w), 2);
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end());
  std::vector<double> yd(static_cast<size_t>(ElementCount(g.output_shape())));
  DirectConv<double, double, double>(g, xd.data(), wd.data(), nullptr, 0.0, nullptr, yd.data());
  OpTest test("BlockedConv", 1, "com.onnxflow");
  SetUpConv(cs, Tensor::FromVector<float>(cs.w, w), &test);
  Result<Tensor> y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  const int64_t pixels = g.out_size();
  double squares = 0, worst = 0;
  for (int64_t c = 0; c < cs.w[0]; ++c) {  // 4 whole blocks: (c, p) at ((c / 16) * pixels + p) * 16 + c % 16
    for (int64_t p = 0; p < pixels; ++p) {
      const double want = yd[static_cast<size_t>(c * pixels + p)];
      const float have = y->data<float>()[((c / kChannelBlock) * pixels + p) * kChannelBlock + c % kChannelBlock];
      squares += want * want;
      worst = std::max(worst, std::abs(have - want));
    }
  }
  const double relative = worst / std::sqrt(squares / static_cast<double>(yd.size()));
  EXPECT_LT(relative, 1.6e-5) << "max error " << worst;
}

TARGETS_TEST(BlockedConvTest, WinogradAndItsLimit) {
  const ConvCase winograd = {{2, 32, 11, 13}, {80, 32, 3, 3}, {}, {0, 2, 1, 0}, {}, true, true, "Relu", 2};
  ConvAttributes attrs;
  attrs.pads = winograd.pads;
  EXPECT_TRUE(WinogradConv::Applies(attrs, winograd.w));
  RunConvCase(winograd);
  RunConvCase({{1, 16, 1, 1}, {16, 16, 3, 3}, {}, {1, 1, 1, 1}});  // one pixel: a tile of padding around it
  const ConvCase direct = {{1, 272, 3, 4}, {272, 272, 3, 3}, {}, {1, 1, 1, 1}};
  EXPECT_FALSE(WinogradConv::Applies(attrs, direct.w));
  RunConvCase(direct);
  attrs.strides = {2, 2};
  EXPECT_FALSE(WinogradConv::Applies(attrs, winograd.w));
}

// A float16 or bfloat16 model's weights stay 16-bit in the kernel (blocked_conv_tile.h) and are
// widened in registers, Winograd's transformed as each task runs (winograd.cc): the outputs equal
// the float kernel's on the widened weights, bit for bit, on the direct tiles (pointwise, windows,
// stems, narrow tiles, chunks of input blocks, strides) and on Winograd's; with subnormal weights.
void RunHalfWeightsCase(const ConvCase& cs) {
  std::vector<float> w = Random(ElementCount(cs.w), 2);
  for (size_t i = 0; i < w.size(); i += 7) w[i] *= 1e-6f;  // float16 subnormals
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    SCOPED_TRACE(std::string(DataTypeName(type)) + " X " + ShapeToString(cs.x) + " W " + ShapeToString(cs.w));
    const SixteenBitValues w16 = RoundToSixteenBits(w, type, cs.w);
    OpTest in_float("BlockedConv", 1, "com.onnxflow"), in_16_bits("BlockedConv", 1, "com.onnxflow");
    SetUpConv(cs, Tensor::FromVector<float>(cs.w, w16.widened), &in_float);
    SetUpConv(cs, w16.tensor, &in_16_bits);
    Result<Tensor> want = RunOne(in_float), y = RunOne(in_16_bits);
    ASSERT_TRUE(want.ok()) << want.status().ToString();
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(*want, *y));
  }
}

TARGETS_TEST(BlockedConvTest, HalfWeightsEqualTheFloatKernelOnWidenedWeights) {
  RunHalfWeightsCase({{1, 160, 4, 5}, {80, 160, 1, 1}, {}, {}, {}, true, false, "Relu"});
  RunHalfWeightsCase({{1, 64, 13, 11}, {32, 64, 1, 1}, {}, {}, {}, true, true, "Relu", 2});
  RunHalfWeightsCase({{1, 640, 4, 5}, {80, 640, 3, 3}, {}, {1, 1, 1, 1}, {}, true, false, "Relu"});
  RunHalfWeightsCase({{1, 272, 3, 4}, {272, 272, 3, 3}, {}, {1, 1, 1, 1}});
  RunHalfWeightsCase({{1, 40, 11, 11}, {72, 40, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, true, "Relu", 2});
  RunHalfWeightsCase({{1, 3, 23, 21}, {64, 3, 7, 7}, {2, 2}, {3, 3, 3, 3}, {}, true, false, "Relu"});
  RunHalfWeightsCase({{2, 32, 11, 13}, {80, 32, 3, 3}, {}, {0, 2, 1, 0}, {}, true, true, "Relu", 2});  // Winograd
  RunHalfWeightsCase({{1, 64, 28, 28}, {128, 64, 3, 3}, {}, {1, 1, 1, 1}, {}, true, false, "Relu", 2});
  RunHalfWeightsCase({{1, 104, 10, 9}, {104, 8, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, false, "Relu", 2, 13});  // groups
  RunHalfWeightsCase({{1, 128, 6, 5}, {128, 32, 3, 3}, {}, {1, 1, 1, 1}, {}, true, true, "", 1, 4});
  // Weights bigger than the image on one core: each group's two ranges run in a row, the second
  // on the weights the first widened.
  RunHalfWeightsCase({{1, 256, 14, 14}, {256, 256, 1, 1}, {}, {}, {}, true, true, "Relu"});
}

// A large image's V (past kMaxWholeImageV, 8 MB) is transformed a part of 30 tiles at a time
// (winograd.cc's RunInParts): 63 x 59 tiles of 16 channels, a short last part (3717 = 123 x 30 +
// 27), two output groups (64 + 16), a residual, two threads; and with 16-bit weights, each task
// transforming its group's U. With 16-bit weights, parts from a V of 2 MB (kMaxWholeImageVHalf):
// 64 channels on 16 x 16 tiles (2.4 MB) run whole with float weights, in parts with 16-bit ones,
// and give the same bits.
TEST(BlockedConvTest, WinogradInParts) {
  const ConvCase large = {{1, 16, 250, 236}, {80, 16, 3, 3}, {}, {1, 1, 1, 1}, {}, true, true, "Relu", 2};
  RunConvCase(large);
  RunHalfWeightsCase(large);
  RunHalfWeightsCase({{1, 64, 64, 61}, {80, 64, 3, 3}, {}, {1, 1, 1, 1}, {}, true, true, "Relu", 1});
}

// BlockedResize and BlockedShape (blocked_resize.h) refuse, by name, what would change N or C.
TEST(BlockedResizeTest, RefusesAResizeOfBatchOrChannels) {
  const Tensor x = ToBlockedRef(Tensor::FromVector<float>({1, 16, 2, 2}, Random(64, 1)));
  OpTest sizes("BlockedResize", 1, "com.onnxflow");
  sizes.Input(x).AbsentInput().Input(Tensor::FromVector<int64_t>({4}, {1, 32, 4, 4})).Attr("channels", int64_t{16});
  EXPECT_TRUE(Refused(RunOne(sizes), StatusCode::kInvalidArgument,
                      "BlockedResize: 'sizes' [1,32,4,4] must keep N and C of [1,16,2,2]"));
  OpTest scales("BlockedResize", 1, "com.onnxflow");
  scales.Input(x).Input(Tensor::FromVector<float>({4}, {2, 1, 2, 2})).Attr("channels", int64_t{16});
  EXPECT_TRUE(Refused(RunOne(scales), StatusCode::kInvalidArgument, "BlockedResize: 'scales' must keep N and C"));
  OpTest both("BlockedResize", 1, "com.onnxflow");
  both.Input(x).Input(Tensor::FromVector<float>({4}, {1, 1, 2, 2}))
      .Input(Tensor::FromVector<int64_t>({4}, {1, 16, 4, 4})).Attr("channels", int64_t{16});
  EXPECT_TRUE(Refused(RunOne(both), StatusCode::kInvalidArgument, "BlockedResize: give one of 'scales' and 'sizes'"));
  OpTest no_channels("BlockedShape", 1, "com.onnxflow");
  no_channels.Input(x);
  EXPECT_TRUE(Refused(RunOne(no_channels), StatusCode::kUnimplemented, "BlockedShape: no channel count"));
  OpTest shape("BlockedShape", 1, "com.onnxflow");  // 12 channels in one padded block
  shape.Input(x).Attr("channels", int64_t{12}).Attr("start", int64_t{1});
  Result<Tensor> dims = RunOne(shape);
  ASSERT_TRUE(dims.ok()) << dims.status().ToString();
  EXPECT_TRUE(TensorsEqual(*dims, Tensor::FromVector<int64_t>({3}, {12, 2, 2})));
}

// The epilogue applies each fused activation (Relu has its own path), after the residual.
TARGETS_TEST(BlockedConvTest, EveryActivation) {
  for (const char* activation : {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid", "HardSwish", "Swish"}) {
    SCOPED_TRACE(activation);
    RunConvCase({{1, 32, 7, 7}, {32, 32, 3, 3}, {}, {1, 1, 1, 1}, {}, true, true, activation});
  }
}

// Tiles of one pixel: squeeze-and-excitation's 1x1 maps (its convolutions of 72 -> 24 -> 96
// channels, the second with HardSigmoid, whole blocks: HardSigmoid(0) of pad lanes is not 0), a
// 3x3 window on one pixel (every tap but the centre in the padding), and a map whose last tile
// holds one pixel (5 x 5 = 4 tiles of 6 and 1).
TARGETS_TEST(BlockedConvTest, OnePixelTiles) {
  RunConvCase({{1, 72, 1, 1}, {24, 72, 1, 1}, {}, {}, {}, true, false, "Relu"});
  RunConvCase({{1, 24, 1, 1}, {96, 24, 1, 1}, {}, {}, {}, true, false, "HardSigmoid"});
  RunConvCase({{2, 32, 1, 1}, {64, 32, 3, 3}, {}, {1, 1, 1, 1}, {}, true, true, "HardSwish"});
  RunConvCase({{1, 48, 5, 5}, {96, 48, 3, 3}, {}, {1, 1, 1, 1}, {}, true, false, "Relu"});
}

// Channel counts that are not whole blocks: the last block's pad lanes meet zero weights in, and
// come out zero (no bias there, and Relu(0) = 0).
TARGETS_TEST(BlockedConvTest, PartialBlocks) {
  RunConvCase({{1, 16, 9, 9}, {24, 16, 3, 3}, {}, {1, 1, 1, 1}});
  RunConvCase({{1, 24, 7, 6}, {40, 24, 1, 1}, {}, {}, {}, true, false, "Relu"});
  RunConvCase({{1, 40, 11, 11}, {72, 40, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, true, "Relu", 2});
  RunConvCase({{1, 3, 19, 19}, {24, 3, 5, 5}, {2, 2}, {2, 2, 2, 2}});
  RunConvCase({{1, 64, 5, 5}, {1000, 64, 1, 1}, {}, {}, {}, true, false, "Relu"});
}

// The pad lanes of a partial last block, in and out: the tiles read only the real input channels
// (BlockedTile::tail_channels), so NaN in X's pad lanes reaches no output, and the output's pad
// lanes are zeros, also under an activation that maps 0 elsewhere (AVX2 skips their vectors,
// BlockedTile::real_width; AVX-512 computes them). Pointwise (runs of whole tiles, then a partial
// one), a strided 3x3 window (gathered taps), and a deep layer of several chunks on two cores.
TARGETS_TEST(BlockedConvTest, PadLanesAreNeitherReadNorLeftNonZero) {
  const auto run = [](const ConvCase& cs) {
    SCOPED_TRACE("X " + ShapeToString(cs.x) + " W " + ShapeToString(cs.w));
    ConvAttributes attrs;
    attrs.strides = cs.strides;
    attrs.pads = cs.pads;
    const ConvGeometry g = ComputeConvGeometry(attrs, cs.x, cs.w).value();
    const std::vector<float> x = Random(ElementCount(cs.x), 1), w = Random(ElementCount(cs.w), 2),
                             b = Random(cs.w[0], 3);
    std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end()), bd(b.begin(), b.end());
    std::vector<double> yd(static_cast<size_t>(ElementCount(g.output_shape())));
    DirectConv<double, double, double>(g, xd.data(), wd.data(), bd.data(), 0.0, nullptr, yd.data());
    const ActivationSpec act = FusedActivationSpec::Named(cs.activation).value().activation;
    std::vector<float> expected(yd.size());
    for (size_t i = 0; i < yd.size(); ++i) expected[i] = ActivationScalar(act, static_cast<float>(yd[i]));

    Tensor blocked_x = ToBlockedRef(Tensor::FromVector<float>(cs.x, x));
    const int64_t channels = cs.x[1], blocks = blocked_x.dim(1), pixels = cs.x[2] * cs.x[3];
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t lane = channels % kChannelBlock; lane < kChannelBlock; ++lane) {
        blocked_x.mutable_data<float>()[((blocks - 1) * pixels + p) * kChannelBlock + lane] = std::nanf("");
      }
    }
    OpTest test("BlockedConv", 1, "com.onnxflow");
    test.Input(blocked_x).Input(Tensor::FromVector<float>(cs.w, w)).ConstantInput(1);
    test.Input(Tensor::FromVector<float>({cs.w[0]}, b)).ConstantInput(2);
    if (!cs.strides.empty()) test.Attr("strides", cs.strides);
    if (!cs.pads.empty()) test.Attr("pads", cs.pads);
    test.Attr("activation", cs.activation).Threads(cs.threads);
    Result<Tensor> y = RunOne(test);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    // The expected blocked Y has zeros in its pad lanes (ToBlockedRef).
    EXPECT_TRUE(TensorsNear(ToBlockedRef(Tensor::FromVector<float>(g.output_shape(), expected)), *y, 1e-4, 1e-4));
  };
  run({{1, 24, 7, 9}, {40, 24, 1, 1}, {}, {}, {}, true, false, "HardSigmoid"});
  run({{1, 40, 11, 11}, {24, 40, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, false, "HardSigmoid"});
  run({{1, 4104, 3, 5}, {24, 4104, 1, 1}, {}, {}, {}, true, false, "HardSigmoid", 2});
}

// 17 to 32 output channels run in tiles of 12 pixels on AVX-512 (blocked_conv_tile.h): maps that
// are not whole tiles, pointwise with a residual on two cores, a 32-channel stem (MobileNet's),
// strided windows with pad lanes on two images.
TARGETS_TEST(BlockedConvTest, NarrowTiles) {
  RunConvCase({{1, 64, 13, 11}, {32, 64, 1, 1}, {}, {}, {}, true, true, "Relu", 2});
  RunConvCase({{1, 3, 29, 31}, {32, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, true, false, "Clip"});
  RunConvCase({{2, 48, 9, 10}, {24, 48, 3, 3}, {2, 1}, {1, 0, 1, 1}});
}

// out_blocks / out_block_offset / INTO: the convolution fills its blocks of a wider tensor and
// keeps INTO's other blocks: copied while INTO is the caller's, written in place once it may be.
TARGETS_TEST(BlockedConvTest, WritesItsBlocksIntoAJoinedTensor) {
  const Tensor x = ToBlockedRef(Tensor::FromVector<float>({1, 16, 5, 5}, Random(16 * 25, 1)));
  const Tensor w = Tensor::FromVector<float>({32, 16, 3, 3}, Random(32 * 16 * 9, 2));
  const Tensor into = Tensor::FromVector<float>({1, 4, 5, 5, 16}, Random(4 * 25 * 16, 3));
  OpTest alone("BlockedConv", 1, "com.onnxflow");
  alone.Input(x).Input(w).ConstantInput(1).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  Result<Tensor> own = RunOne(alone);
  ASSERT_TRUE(own.ok()) << own.status().ToString();

  OpTest joined("BlockedConv", 1, "com.onnxflow");
  joined.Input(x).Input(w).ConstantInput(1).AbsentInput().AbsentInput().Input(into);
  joined.Attr("pads", std::vector<int64_t>{1, 1, 1, 1}).Attr("out_blocks", int64_t{4}).Attr("out_block_offset", int64_t{1});
  Result<Tensor> y = RunOne(joined);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  ASSERT_EQ(y->shape(), into.shape());
  const int64_t block = 25 * 16;
  for (int64_t i = 0; i < 4 * block; ++i) {
    const float want = i >= block && i < 3 * block ? own->data<float>()[i - block] : into.data<float>()[i];
    ASSERT_EQ(y->data<float>()[i], want) << "element " << i;
  }
  EXPECT_FALSE(joined.WroteInto(4, 0));
  joined.ReusableInput(4);  // INTO that no one else reads: written in place, to the same values
  Result<Tensor> in_place = RunOne(joined);
  ASSERT_TRUE(in_place.ok()) << in_place.status().ToString();
  EXPECT_TRUE(joined.WroteInto(4, 0));
  EXPECT_TRUE(TensorsEqual(*y, *in_place));

  OpTest narrow("BlockedConv", 1, "com.onnxflow");  // blocks 3..4 of a 4-block tensor
  narrow.Input(x).Input(w).ConstantInput(1).Attr("out_blocks", int64_t{4}).Attr("out_block_offset", int64_t{3});
  EXPECT_TRUE(Refused(RunOne(narrow), StatusCode::kInvalidArgument, "BlockedConv: out_block_offset 3 and out_blocks 4 do not hold 32 whole blocks of output channels"));
  OpTest mismatched("BlockedConv", 1, "com.onnxflow");  // INTO has 3 blocks, not 4
  mismatched.Input(x).Input(w).ConstantInput(1).AbsentInput().AbsentInput();
  mismatched.Input(Tensor(DataType::kFloat, {1, 3, 3, 3, 16})).Attr("out_blocks", int64_t{4});
  Result<Tensor> refused = RunOne(mismatched);
  ASSERT_TRUE(Refused(refused, StatusCode::kInvalidArgument, "BlockedConv: input 'INTO' must be float32 [1,4,3,3,16], got float32 [1,3,3,3,16]"));
  EXPECT_NE(refused.status().ToString().find("INTO"), std::string::npos) << refused.status().ToString();
}

// The plan for a few shapes is what the rules in blocked_conv_plan.cc say (tiles of 6 pixels).
TEST(BlockedConvPlanTest, FollowsTheRules) {
  ConvAttributes attrs;
  // ResNet-50's 1x1 64 -> 64 on 56x56, two cores: 523 tiles in 17 ranges of 31 (halved from 128
  // until there are 8 tasks per core), one range through the weights (the image is bigger).
  BlockedConvLayout pointwise;
  pointwise.in_width = pointwise.out_width = 64;
  pointwise.taps = 1;
  pointwise.block_channels = kChannelBlock;
  pointwise.blocks = pointwise.chunk_blocks = pointwise.group_blocks = 4;
  pointwise.group_channels = kGroupChannels;
  pointwise.packed_floats = 64 * 64;
  const ConvGeometry g1 = ComputeConvGeometry(attrs, {1, 64, 56, 56}, {64, 64, 1, 1}).value();
  const BlockedConvPlan p1 = MakeBlockedConvPlan(pointwise, {1, 4, 56, 56, 16}, g1, 2, 6);
  EXPECT_EQ(p1.path, BlockedConvPlan::Path::kDirect);
  EXPECT_EQ(p1.tiles, 523);
  EXPECT_EQ(p1.groups, 1);
  EXPECT_EQ(p1.ranges, 17);
  EXPECT_EQ(p1.per_task, 31);
  EXPECT_EQ(p1.tasks, 17);
  EXPECT_TRUE(p1.groups_inner);
  EXPECT_TRUE(p1.pointwise);
  EXPECT_EQ(p1.uniform_taps, std::vector<int64_t>{0});
  EXPECT_EQ(p1.uniform_channels, 16);
  EXPECT_TRUE(p1.For({1, 4, 56, 56, 16}, 2, 6));
  EXPECT_FALSE(p1.For({1, 4, 56, 56, 16}, 1, 6));
  EXPECT_EQ(p1.ToString(),
            "BlockedConvPlan X=[1,4,56,56,16] threads=2 direct tile=6px tiles=523 groups=1 ranges=17x31 tasks=17 "
            "groups-inner pointwise uniform-taps=1x16ch");

  // A 7x7 stride-2 stem of 3 channels on one core: the tiles read a padded copy (230 x 230, no
  // pads), a kernel row of 7 pixels x 3 channels at a time.
  BlockedConvLayout stem;
  stem.in_width = stem.block_channels = 3;
  stem.out_width = 64;
  stem.taps = 49;
  stem.blocks = stem.chunk_blocks = stem.group_blocks = 1;
  stem.group_channels = kGroupChannels;
  stem.packed_floats = 64 * 3 * 49;
  stem.stem = true;
  ConvAttributes stem_attrs;
  stem_attrs.strides = {2, 2};
  stem_attrs.pads = {3, 3, 3, 3};
  const ConvGeometry g2 = ComputeConvGeometry(stem_attrs, {1, 3, 224, 224}, {64, 3, 7, 7}).value();
  const BlockedConvPlan p2 = MakeBlockedConvPlan(stem, {1, 3, 224, 224}, g2, 1, 6);
  EXPECT_EQ(p2.tile_geometry.in_spatial, (std::vector<int64_t>{230, 230}));
  EXPECT_EQ(p2.tile_geometry.pads_begin, (std::vector<int64_t>{0, 0}));
  EXPECT_EQ(p2.geometry.pads_begin, (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(p2.pixel_stride, 3);
  EXPECT_EQ(p2.tiles, 2091);
  EXPECT_EQ(p2.ranges, 17);
  EXPECT_EQ(p2.per_task, 123);
  EXPECT_EQ(p2.uniform_taps.size(), 7u);
  EXPECT_EQ(p2.uniform_taps[1], 230 * 3);
  EXPECT_EQ(p2.uniform_channels, 21);

  // A 1x1 448 -> 448 on 7x7 (RegNet's last stage): weights bigger than the image, so one core walks
  // each group through every range; on two cores each range takes every group (the cores split
  // the pixels, and the next layer's split finds its pixels in its own core's cache), the weights
  // being only 9 times the image.
  BlockedConvLayout wide = pointwise;
  wide.in_width = wide.out_width = 448;
  wide.blocks = wide.chunk_blocks = wide.group_blocks = 28;
  wide.packed_floats = 448 * 448;
  const ConvGeometry g4 = ComputeConvGeometry(attrs, {1, 448, 7, 7}, {448, 448, 1, 1}).value();
  EXPECT_FALSE(MakeBlockedConvPlan(wide, {1, 28, 7, 7, 16}, g4, 1, 6).groups_inner);
  const BlockedConvPlan p4 = MakeBlockedConvPlan(wide, {1, 28, 7, 7, 16}, g4, 2, 6);
  EXPECT_TRUE(p4.groups_inner);
  EXPECT_EQ(p4.groups, 7);
  EXPECT_EQ(p4.ranges, 2);
  EXPECT_EQ(p4.RangeTiles(0), std::make_pair(int64_t{0}, int64_t{4}));  // 24 pixels
  EXPECT_EQ(p4.RangeTiles(1), std::make_pair(int64_t{4}, int64_t{9}));  // 25, the last tile one
  // But 3x3 512 -> 512 on 7x7 splits the channels: its weights are 94 times its image.
  BlockedConvLayout big = wide;
  big.in_width = big.out_width = 512;
  big.taps = 9;
  big.blocks = big.chunk_blocks = big.group_blocks = 32;
  big.packed_floats = 512 * 512 * 9;
  ConvAttributes padded;
  padded.pads = {1, 1, 1, 1};
  const ConvGeometry g5 = ComputeConvGeometry(padded, {1, 512, 7, 7}, {512, 512, 3, 3}).value();
  EXPECT_FALSE(MakeBlockedConvPlan(big, {1, 32, 7, 7, 16}, g5, 2, 6).groups_inner);

  // A 3x3 stride-1 convolution the kernel runs on Winograd's path.
  BlockedConvLayout winograd = pointwise;
  winograd.winograd = true;
  const ConvGeometry g3 = ComputeConvGeometry(ConvAttributes{}, {1, 64, 14, 14}, {64, 64, 3, 3}).value();
  EXPECT_EQ(MakeBlockedConvPlan(winograd, {1, 4, 14, 14, 16}, g3, 2, 6).path, BlockedConvPlan::Path::kWinograd);
}

TEST(BlockedConvTest, RefusesWhatItCannotRun) {
  OpTest grouped("BlockedConv", 1, "com.onnxflow");
  grouped.Input(Tensor(DataType::kFloat, {1, 3, 4, 4, 16}))  // groups of 24 inputs and 16 outputs
      .Input(Tensor::FromVector<float>({32, 24, 3, 3}, Random(32 * 24 * 9, 2)))
      .ConstantInput(1)
      .Attr("group", int64_t{2});
  EXPECT_TRUE(Refused(RunOne(grouped), StatusCode::kInvalidArgument,
                      "BlockedConv: needs channels, a kernel and group 1 or groups it runs, got W [32,24,3,3], group 2"));
  // A kernel with an empty axis (it divided by its taps: SIGFPE).
  OpTest empty_kernel("BlockedConv", 1, "com.onnxflow");
  empty_kernel.Input(Tensor(DataType::kFloat, {1, 1, 4, 4, 16}))
      .Input(Tensor(DataType::kFloat, {32, 16, 0, 3}))
      .ConstantInput(1);
  EXPECT_TRUE(Refused(RunOne(empty_kernel), StatusCode::kInvalidArgument,
                      "BlockedConv: needs channels, a kernel and group 1 or groups it runs, got W [32,16,0,3], group 1"));

  OpTest short_bias("BlockedConv", 1, "com.onnxflow");  // 32 output channels, 16 biases
  short_bias.Input(Tensor(DataType::kFloat, {1, 1, 4, 4, 16}))
      .Input(Tensor::FromVector<float>({32, 16, 1, 1}, Random(32 * 16, 2)))
      .ConstantInput(1)
      .Input(Tensor(DataType::kFloat, {16}))
      .ConstantInput(2);
  Result<Tensor> no_bias = RunOne(short_bias);
  ASSERT_TRUE(Refused(no_bias, StatusCode::kInvalidArgument, "BlockedConv: B must be a constant float vector of 32 values"));
  EXPECT_NE(no_bias.status().ToString().find("BlockedConv: B must be a constant float vector of 32 values"),
            std::string::npos)
      << no_bias.status().ToString();

  OpTest blocks("BlockedConv", 1, "com.onnxflow");  // 40 channels are 3 blocks, not 2
  blocks.Input(Tensor(DataType::kFloat, {1, 2, 4, 4, 16}))
      .Input(Tensor::FromVector<float>({16, 40, 1, 1}, Random(16 * 40, 2)))
      .ConstantInput(1);
  EXPECT_TRUE(Refused(RunOne(blocks), StatusCode::kInvalidArgument, "BlockedConv: input 'X' [1,2,4,4,16] has 2 channel blocks, W [16,40,1,1] needs 3"));

  OpTest plain("BlockedConv", 1, "com.onnxflow");  // 16 channels arrive in the plain layout
  plain.Input(Tensor(DataType::kFloat, {1, 16, 4, 4}))
      .Input(Tensor::FromVector<float>({16, 16, 3, 3}, Random(16 * 16 * 9, 2)))
      .ConstantInput(1);
  Result<Tensor> y = RunOne(plain);
  ASSERT_TRUE(Refused(y, StatusCode::kInvalidArgument, "input 'X' is not channel-blocked [N, C/16, H, W, 16]"));
  EXPECT_NE(y.status().ToString().find("channel-blocked"), std::string::npos) << y.status().ToString();
}

// A stem's 3 or 4 planes interleaved a vector of pixels at a time, then the pixels past the last
// whole vector; planes further apart than their length (rows of a bigger image); and 5 channels
// with 8 lanes, the general path, for contrast.
TARGETS_TEST(BlockedReorderTest, InterleavesAStemsFewChannels) {
  for (const auto& [channels, lanes, pixels] : {std::tuple<int64_t, int64_t, int64_t>{3, 3, 37}, {4, 4, 64},
                                                {3, 3, 5}, {4, 4, 19}, {5, 8, 21}}) {
    const int64_t stride = pixels + 7;
    const std::vector<float> planes = Random(channels * stride, 9);
    std::vector<float> got(pixels * lanes, -1.0f), want(pixels * lanes, 0.0f);
    for (int64_t p = 0; p < pixels; ++p) {
      for (int64_t c = 0; c < channels; ++c) want[p * lanes + c] = planes[c * stride + p];
    }
    InterleaveChannels(planes.data(), stride, channels, pixels, lanes, got.data());
    EXPECT_EQ(got, want) << channels << " channels, " << pixels << " pixels";
  }
}

// Whole 16 x 16 tiles (transposed in registers on AVX-512) and partial ones: pixels past the last
// whole 16, blocks of fewer than 16 channels (whole tiles of them too: 21 = 16 + 5 channels on
// 1517 pixels), and maps of more than one work item's run of pixels, the last run short.
TARGETS_TEST(BlockedReorderTest, RoundTrip) {
  for (const Shape& shape : {Shape{1, 16, 1, 1}, Shape{2, 32, 5, 7}, Shape{1, 48, 17, 3}, Shape{2, 24, 3, 5},
                             Shape{1, 40, 9, 2}, Shape{2, 32, 16, 16}, Shape{1, 16, 4, 4}, Shape{2, 21, 37, 41}}) {
    const Tensor x = Tensor::FromVector<float>(shape, Random(ElementCount(shape), 5));
    OpTest to("ToBlocked", 1, "com.onnxflow");
    to.Input(x).Threads(2);
    Result<Tensor> blocked = RunOne(to);
    ASSERT_TRUE(blocked.ok()) << blocked.status().ToString();
    EXPECT_TRUE(TensorsEqual(ToBlockedRef(x), *blocked));
    OpTest from("FromBlocked", 1, "com.onnxflow");
    from.Input(*blocked).Attr("channels", shape[1]).Threads(2);
    Result<Tensor> back = RunOne(from);
    ASSERT_TRUE(back.ok()) << back.status().ToString();
    EXPECT_TRUE(TensorsEqual(x, *back));
  }
  OpTest bad("ToBlocked", 1, "com.onnxflow");
  bad.Input(Tensor(DataType::kFloat, {1, 24, 2}));
  EXPECT_TRUE(Refused(RunOne(bad), StatusCode::kInvalidArgument, "ToBlocked: input 'X' must be [N, C, H, W], got [1,24,2]"));
  OpTest too_many("FromBlocked", 1, "com.onnxflow");  // 2 blocks hold 17 to 32 channels
  too_many.Input(Tensor(DataType::kFloat, {1, 2, 2, 2, 16})).Attr("channels", int64_t{16});
  EXPECT_TRUE(Refused(RunOne(too_many), StatusCode::kInvalidArgument, "FromBlocked: 16 channels do not fill the last of 2 blocks"));
  // A residual of 15 channels for a 16-channel convolution blocks to the same shape as 16: the count
  // its reader expects is checked before the pad lanes hide the difference.
  OpTest lying("ToBlocked", 1, "com.onnxflow");
  lying.Input(Tensor(DataType::kFloat, {1, 15, 2, 2})).Attr("channels", int64_t{16});
  EXPECT_TRUE(Refused(RunOne(lying), StatusCode::kInvalidArgument,
                      "ToBlocked: input 'X' [1,15,2,2] must have the 16 channels its blocked reader's weights expect"));
}

// BlockedDepthwiseConv against the direct loop: C channels (pad lanes when not a multiple of 16),
// each convolved with its own window.
struct DepthwiseCase {
  Shape x;
  std::vector<int64_t> kernel, strides, pads, dilations;
  bool bias = true;
  std::string activation;
  int threads = 1;
};

void RunDepthwiseCase(const DepthwiseCase& cs) {
  SCOPED_TRACE("X " + ShapeToString(cs.x) + " kernel " + ShapeToString(cs.kernel));
  const int64_t channels = cs.x[1];
  const Shape w_shape = {channels, 1, cs.kernel[0], cs.kernel[1]};
  const std::vector<float> x = Random(ElementCount(cs.x), 11), w = Random(ElementCount(w_shape), 12),
                           b = Random(channels, 13);
  ConvAttributes attrs;
  attrs.strides = cs.strides;
  attrs.pads = cs.pads;
  attrs.dilations = cs.dilations;
  attrs.group = channels;
  const ConvGeometry g = ComputeConvGeometry(attrs, cs.x, w_shape).value();
  const ActivationSpec act = FusedActivationSpec::Named(cs.activation).value().activation;
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end()), bd(b.begin(), b.end());
  std::vector<double> yd(static_cast<size_t>(ElementCount(g.output_shape())));
  DirectConv<double, double, double>(g, xd.data(), wd.data(), cs.bias ? bd.data() : nullptr, 0.0, nullptr, yd.data());
  std::vector<float> expected(yd.size());
  for (size_t i = 0; i < yd.size(); ++i) expected[i] = ActivationScalar(act, static_cast<float>(yd[i]));

  OpTest test("BlockedDepthwiseConv", 1, "com.onnxflow");
  test.Input(ToBlockedRef(Tensor::FromVector<float>(cs.x, x))).Input(Tensor::FromVector<float>(w_shape, w));
  test.ConstantInput(1);
  if (cs.bias) test.Input(Tensor::FromVector<float>({channels}, b)).ConstantInput(2);
  test.Attr("group", channels);
  if (!cs.strides.empty()) test.Attr("strides", cs.strides);
  if (!cs.pads.empty()) test.Attr("pads", cs.pads);
  if (!cs.dilations.empty()) test.Attr("dilations", cs.dilations);
  if (!cs.activation.empty()) test.Attr("activation", cs.activation);
  test.Threads(cs.threads);
  Result<Tensor> y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(ToBlockedRef(Tensor::FromVector<float>(g.output_shape(), expected)), *y, 1e-5, 1e-5));
}

TARGETS_TEST(BlockedDepthwiseTest, MatchesDirectConv) {
  // MobileNet's: 3x3, stride 1 and 2 with pads, Clip (ReLU6); maps narrower than the 4 pixels
  // computed side by side, and wide enough for interior runs.
  RunDepthwiseCase({{1, 32, 12, 13}, {3, 3}, {}, {1, 1, 1, 1}, {}, true, "Clip"});
  RunDepthwiseCase({{1, 48, 15, 14}, {3, 3}, {2, 2}, {1, 1, 1, 1}});
  RunDepthwiseCase({{1, 16, 3, 2}, {3, 3}, {}, {1, 1, 1, 1}, {}, false, "Relu"});
  // MobileNetV3's: 5x5 stride 2 with HardSwish, 72 channels (half a block of pad lanes).
  RunDepthwiseCase({{1, 72, 13, 13}, {5, 5}, {2, 2}, {2, 2, 2, 2}, {}, true, "HardSwish"});
  // Pad lanes (24 channels), 5x5, asymmetric pads, dilation, batch 2, two cores.
  RunDepthwiseCase({{2, 24, 11, 17}, {5, 5}, {1, 2}, {2, 0, 1, 3}, {1, 2}, true, "", 2});
  RunDepthwiseCase({{1, 64, 28, 28}, {3, 3}, {}, {1, 1, 1, 1}, {}, true, "Relu", 2});
  // A window that never fits: every column is a border column.
  RunDepthwiseCase({{1, 16, 2, 2}, {3, 3}, {}, {2, 2, 2, 2}, {2, 2}});
  // The wide interiors of 5- and 7-wide windows (EfficientNet's 5x5 with SiLU, ConvNeXt's 7x7),
  // stride 1 and 2: rows of 8-pixel runs (4 on 16-register targets) and a remainder of 1 to 7
  // columns that go to the 4-pixel runs and the border.
  RunDepthwiseCase({{1, 40, 14, 23}, {5, 5}, {}, {2, 2, 2, 2}, {}, true, "Swish"});
  RunDepthwiseCase({{1, 32, 9, 29}, {5, 5}, {2, 2}, {2, 2, 2, 2}, {}, true, "Swish"});
  RunDepthwiseCase({{1, 24, 10, 27}, {7, 7}, {}, {3, 3, 3, 3}});
  RunDepthwiseCase({{1, 16, 11, 41}, {7, 7}, {2, 2}, {3, 3, 3, 3}, {}, false, "Relu", 2});
  // Near misses that keep the 4-pixel runs: a dilated 5-wide window, a 7-wide window of stride 3.
  RunDepthwiseCase({{1, 16, 9, 30}, {5, 5}, {}, {4, 4, 4, 4}, {1, 2}});
  RunDepthwiseCase({{1, 16, 9, 40}, {7, 7}, {3, 3}, {3, 3, 3, 3}});
}

TEST(BlockedDepthwiseTest, RefusesWhatItIsNot) {
  // The message refusing X, constant W (and constant B when given) with `group`; "" if it ran.
  auto refusal = [](const Shape& x, const Shape& w, int64_t group, const Shape& b = {}) {
    OpTest t("BlockedDepthwiseConv", 1, "com.onnxflow");
    t.Input(Tensor(DataType::kFloat, x)).Input(Tensor(DataType::kFloat, w)).ConstantInput(1).Attr("group", group);
    if (!b.empty()) t.Input(Tensor(DataType::kFloat, b)).ConstantInput(2);
    Result<Tensor> y = RunOne(t);
    return y.ok() ? std::string() : y.status().ToString();
  };
  const std::string two_per_group = refusal({1, 1, 4, 4, 16}, {16, 2, 3, 3}, 8);
  EXPECT_NE(two_per_group.find("W must be a constant float, float16 or bfloat16 [C, 1, kh, kw]"), std::string::npos) << two_per_group;
  const std::string grouped = refusal({1, 1, 4, 4, 16}, {16, 1, 3, 3}, 8);
  EXPECT_NE(grouped.find("group 8 must equal W's 16 channels"), std::string::npos) << grouped;
  const std::string blocks = refusal({1, 2, 4, 4, 16}, {16, 1, 3, 3}, 16);
  EXPECT_NE(blocks.find("channel blocks"), std::string::npos) << blocks;
  const std::string short_bias = refusal({1, 1, 4, 4, 16}, {16, 1, 3, 3}, 16, {8});
  EXPECT_NE(short_bias.find("BlockedDepthwiseConv: B must be a constant float vector of 16 values"), std::string::npos)
      << short_bias;
  // Hostile geometry is refused, not run: a zero stride, a 3-D weight.
  for (const auto& [w_shape, strides, reason] : std::vector<std::tuple<Shape, std::vector<int64_t>, std::string>>{
           {{16, 1, 3, 3}, {0, 1}, "strides must be positive"},
           {{16, 1, 3}, {1}, "W must be a constant float, float16 or bfloat16 [C, 1, kh, kw]"}}) {
    OpTest hostile("BlockedDepthwiseConv", 1, "com.onnxflow");
    hostile.Input(Tensor(DataType::kFloat, {1, 1, 4, 4, 16})).Input(Tensor(DataType::kFloat, w_shape)).ConstantInput(1);
    hostile.Attr("group", int64_t{16}).Attr("strides", strides);
    EXPECT_TRUE(Refused(RunOne(hostile), StatusCode::kInvalidArgument, reason)) << ShapeToString(w_shape);
  }
}

// The inputs of BatchNormalization `plain` and BlockedBatchNormalization `blocked` (the same x,
// blocked for the latter, and the same constant scale, B, mean and positive variance, from seeds
// seed .. seed + 4), epsilon 1e-3, on `threads` cores.
void NormalizationInputs(const Shape& x_shape, int seed, int threads, OpTest* plain, OpTest* blocked) {
  const int64_t c = x_shape[1];
  const Tensor x = Tensor::FromVector<float>(x_shape, Random(ElementCount(x_shape), seed));
  std::vector<float> var = Random(c, seed + 4);
  for (float& v : var) v = std::fabs(v) + 0.1f;
  const std::vector<Tensor> params = {Tensor::FromVector<float>({c}, Random(c, seed + 1)),
                                      Tensor::FromVector<float>({c}, Random(c, seed + 2)),
                                      Tensor::FromVector<float>({c}, Random(c, seed + 3)), Tensor::FromVector<float>({c}, var)};
  plain->Input(x);
  blocked->Input(ToBlockedRef(x));
  for (OpTest* t : {plain, blocked}) {
    for (int i = 0; i < 4; ++i) t->Input(params[static_cast<size_t>(i)]).ConstantInput(i + 1);
    t->Attr("epsilon", 1e-3f);
    t->Threads(threads);
  }
}

// BlockedBatchNormalization with a fused LeakyRelu against BatchNormalization then LeakyRelu, with
// pad lanes (40 channels) and on two cores; and its refusal of parameters that are not per channel.
TARGETS_TEST(BlockedBatchNormTest, MatchesBatchNormalization) {
  for (const auto& [x_shape, threads] : std::vector<std::pair<Shape, int>>{{{2, 40, 5, 7}, 1}, {{1, 32, 64, 64}, 2}}) {
    SCOPED_TRACE(ShapeToString(x_shape));
    OpTest plain("BatchNormalization", 15);
    OpTest blocked("BlockedBatchNormalization", 1, "com.onnxflow");
    NormalizationInputs(x_shape, 21, threads, &plain, &blocked);
    blocked.Attr("activation", std::string("LeakyRelu")).Attr("activation_alpha", 0.25f);
    Result<Tensor> expected = RunOne(plain);
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    for (int64_t i = 0; i < expected->size(); ++i) {
      float& v = expected->mutable_data<float>()[i];
      v = v < 0 ? v * 0.25f : v;
    }
    Result<Tensor> actual = RunOne(blocked);
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    EXPECT_TRUE(TensorsNear(ToBlockedRef(*expected), *actual, 1e-5, 1e-5));
  }
  OpTest wrong_blocks("BlockedBatchNormalization", 1, "com.onnxflow");  // 16 channels' parameters, 2 blocks
  wrong_blocks.Input(Tensor(DataType::kFloat, {1, 2, 2, 2, 16}));
  for (int i = 1; i < 5; ++i) wrong_blocks.Input(Tensor(DataType::kFloat, {16})).ConstantInput(i);
  Result<Tensor> refused = RunOne(wrong_blocks);
  ASSERT_TRUE(Refused(refused, StatusCode::kInvalidArgument, "BlockedBatchNormalization: input 'X' [1,2,2,2,16] has 2 channel blocks, its scale needs 1"));
  EXPECT_NE(refused.status().ToString().find("has 2 channel blocks, its scale needs 1"),
            std::string::npos)
      << refused.status().ToString();
  OpTest per_element("BlockedBatchNormalization", 1, "com.onnxflow");
  per_element.Input(Tensor(DataType::kFloat, {1, 1, 2, 2, 16}));
  for (int i = 1; i < 5; ++i) per_element.Input(Tensor(DataType::kFloat, {16, 2, 2})).ConstantInput(i);
  Result<Tensor> per_pixel = RunOne(per_element);
  ASSERT_TRUE(Refused(per_pixel, StatusCode::kInvalidArgument, "BlockedBatchNormalization: scale must be a constant float vector of the channels' length"));
  EXPECT_NE(per_pixel.status().ToString().find("scale must be a constant float vector"), std::string::npos)
      << per_pixel.status().ToString();
}

// BlockedBatchNormalization with a PRelu's per-channel slopes (input 5) and a Relu after them,
// against BatchNormalization, then the PRelu, then the Relu: slopes of both signs, so that the
// order shows (a negative slope makes a negative value positive, which the Relu keeps). Pad lanes
// (40 channels) and two cores; a slope of another length is refused.
TARGETS_TEST(BlockedBatchNormTest, SlopesAfterTheAffineMap) {
  for (const auto& [x_shape, threads] : std::vector<std::pair<Shape, int>>{{{2, 40, 5, 7}, 1}, {{1, 32, 64, 64}, 2}}) {
    SCOPED_TRACE(ShapeToString(x_shape));
    const int64_t c = x_shape[1], plane = x_shape[2] * x_shape[3];
    const std::vector<float> slope = Random(c, 36);
    OpTest plain("BatchNormalization", 15);
    OpTest blocked("BlockedBatchNormalization", 1, "com.onnxflow");
    NormalizationInputs(x_shape, 31, threads, &plain, &blocked);
    blocked.Input(Tensor::FromVector<float>({c}, slope)).ConstantInput(5);
    blocked.Attr("activation", std::string("Relu"));
    Result<Tensor> expected = RunOne(plain);
    ASSERT_TRUE(expected.ok()) << expected.status().ToString();
    for (int64_t i = 0; i < expected->size(); ++i) {
      float& v = expected->mutable_data<float>()[i];
      if (v < 0) v *= slope[static_cast<size_t>((i / plane) % c)];
      v = std::max(v, 0.0f);
    }
    Result<Tensor> actual = RunOne(blocked);
    ASSERT_TRUE(actual.ok()) << actual.status().ToString();
    EXPECT_TRUE(TensorsNear(ToBlockedRef(*expected), *actual, 1e-5, 1e-5));
  }
  OpTest wrong_slope("BlockedBatchNormalization", 1, "com.onnxflow");
  wrong_slope.Input(Tensor(DataType::kFloat, {1, 1, 2, 2, 16}));
  for (int i = 1; i < 5; ++i) wrong_slope.Input(Tensor(DataType::kFloat, {16})).ConstantInput(i);
  wrong_slope.Input(Tensor(DataType::kFloat, {8})).ConstantInput(5);
  ASSERT_TRUE(Refused(RunOne(wrong_slope), StatusCode::kInvalidArgument,
                      "BlockedBatchNormalization: slope must be a constant float vector of the channels' length"));
}

struct PoolCase {
  std::string op;
  Shape x;
  std::vector<int64_t> kernel, strides, pads;
  int64_t ceil_mode = 0, count_include_pad = 0;
  std::vector<int64_t> dilations;
  int threads = 1;
};

void RunPoolCase(const PoolCase& cs) {
  SCOPED_TRACE(cs.op + " X " + ShapeToString(cs.x));
  const Tensor x = Tensor::FromVector<float>(cs.x, Random(ElementCount(cs.x), 6));
  const bool global = cs.kernel.empty();
  OpTest plain(cs.op, 22);
  OpTest blocked("Blocked" + cs.op, 1, "com.onnxflow");
  plain.Input(x);
  blocked.Input(ToBlockedRef(x));
  for (OpTest* t : {&plain, &blocked}) {
    if (global) continue;
    t->Attr("kernel_shape", cs.kernel);
    if (!cs.strides.empty()) t->Attr("strides", cs.strides);
    if (!cs.pads.empty()) t->Attr("pads", cs.pads);
    if (!cs.dilations.empty()) t->Attr("dilations", cs.dilations);
    t->Attr("ceil_mode", cs.ceil_mode);
    if (cs.op == "AveragePool") t->Attr("count_include_pad", cs.count_include_pad);
  }
  Result<Tensor> expected = RunOne(plain);
  ASSERT_TRUE(expected.ok()) << expected.status().ToString();
  blocked.Threads(cs.threads);
  Result<Tensor> actual = RunOne(blocked);
  ASSERT_TRUE(actual.ok()) << actual.status().ToString();
  EXPECT_TRUE(TensorsNear(ToBlockedRef(*expected), *actual, 1e-5, 1e-6));
}

TARGETS_TEST(BlockedPoolTest, MatchesPlainPools) {
  RunPoolCase({"MaxPool", {1, 16, 13, 13}, {3, 3}, {2, 2}});
  RunPoolCase({"MaxPool", {2, 32, 14, 15}, {3, 3}, {2, 2}, {1, 1, 1, 1}});
  RunPoolCase({"MaxPool", {1, 16, 13, 13}, {3, 3}, {2, 2}, {}, 1});
  RunPoolCase({"AveragePool", {1, 16, 9, 9}, {3, 3}, {1, 1}, {1, 1, 1, 1}});
  RunPoolCase({"AveragePool", {1, 32, 9, 8}, {3, 2}, {2, 2}, {1, 0, 1, 1}, 0, 1});
  // Dilated windows: the column pass steps over the reduced columns too.
  RunPoolCase({"MaxPool", {1, 16, 11, 12}, {3, 2}, {1, 2}, {2, 1, 2, 1}, 0, 0, {2, 3}});
  RunPoolCase({"AveragePool", {1, 16, 10, 9}, {2, 3}, {2, 1}, {1, 1, 1, 1}, 0, 1, {2, 2}});
  // 3x3 windows of stride 1 or 2 (one pass with columns carried over): long interiors between
  // cut borders, asymmetric pads, ceil_mode, pads counted, a map with no interior at all.
  RunPoolCase({"MaxPool", {1, 16, 20, 23}, {3, 3}, {1, 1}, {1, 1, 1, 1}});
  // On two cores: two images, 3 blocks, 28 output rows.
  RunPoolCase({"MaxPool", {2, 48, 56, 56}, {3, 3}, {2, 2}, {1, 1, 1, 1}, 0, 0, {}, 2});
  RunPoolCase({"AveragePool", {1, 40, 29, 30}, {3, 3}, {1, 1}, {1, 1, 1, 1}, 0, 1, {}, 2});
  RunPoolCase({"AveragePool", {1, 32, 12, 17}, {3, 3}, {2, 2}, {0, 1, 1, 0}, 1, 1});
  RunPoolCase({"AveragePool", {1, 16, 11, 19}, {3, 3}, {1, 2}, {1, 2, 1, 0}});
  RunPoolCase({"MaxPool", {1, 16, 3, 2}, {3, 3}, {1, 2}, {1, 1, 1, 1}});
  // Windows longer than the map by less than a stride (pool_geometry.cc): PP-OCR's classifier
  // pools 2x2 by 2 a map 1 high; padded, counted or not; a map 1 wide too.
  RunPoolCase({"MaxPool", {1, 16, 1, 9}, {2, 2}, {2, 2}});
  RunPoolCase({"AveragePool", {1, 16, 1, 9}, {2, 2}, {2, 2}});
  RunPoolCase({"AveragePool", {1, 32, 1, 1}, {4, 4}, {2, 2}, {1, 1, 1, 1}, 0, 1});
  RunPoolCase({"MaxPool", {1, 16, 2, 7}, {3, 3}, {2, 2}, {}, 1});
  RunPoolCase({"GlobalAveragePool", {2, 32, 7, 7}});
  RunPoolCase({"GlobalMaxPool", {1, 16, 3, 5}});
}

}  // namespace
}  // namespace onnxflow
