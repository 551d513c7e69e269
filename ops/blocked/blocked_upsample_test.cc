// The up-sampling ops of the blocked layout against scalar references in double:
// BlockedConvTranspose (output phases on the convolution tile) on every compiled Highway target at
// 1 and 2 threads — a style network's 3x3 stride 2 with output_padding, DCGAN's 4x4 stride 2 and
// its 1-pixel latent, a U-Net's 2x2 stride 2, stride 1, a kernel smaller than its stride (phases
// with no taps), unequal strides with dilations and asymmetric pads, output_shape, pad lanes in and
// out, two images, input blocks in chunks, images smaller than the kernel; BlockedPad's reflect, edge and constant modes; and what
// both refuse.
#include <cmath>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/blocked_test_util.h"
#include "ops/framework/every_target.h"
#include "ops/framework/shape.h"
#include "ops/framework/testing.h"
#include "ops/math/conv_transpose_geometry.h"
#include "ops/math/fused_activation.h"

namespace onnxflow {
namespace {

using blocked_test::Random;
using blocked_test::RunOne;
using blocked_test::ToBlockedRef;

struct TransposeCase {
  Shape x, w;  // X [N, C, H, W], W [C, M, kh, kw]
  std::vector<int64_t> strides, pads, dilations, output_padding, output_shape;
  bool bias = true;
  std::string activation;
};

void SetAttrs(const TransposeCase& cs, OpTest* test) {
  if (!cs.strides.empty()) test->Attr("strides", cs.strides);
  if (!cs.pads.empty()) test->Attr("pads", cs.pads);
  if (!cs.dilations.empty()) test->Attr("dilations", cs.dilations);
  if (!cs.output_padding.empty()) test->Attr("output_padding", cs.output_padding);
  if (!cs.output_shape.empty()) test->Attr("output_shape", cs.output_shape);
}

// ConvTranspose by its definition: every input pixel's every tap adds x * w into the output pixel
// ih * s - pad + kh * d, in double.
std::vector<float> ReferenceTranspose(const TransposeCase& cs, const TransposeGeometry& g, const std::vector<float>& x,
                                      const std::vector<float>& w, const std::vector<float>& b) {
  const int64_t c_n = cs.x[1], m_n = cs.w[1], kh_n = cs.w[2], kw_n = cs.w[3];
  const int64_t ih_n = cs.x[2], iw_n = cs.x[3], oh_n = g.out_spatial[0], ow_n = g.out_spatial[1];
  const ActivationSpec act = FusedActivationSpec::Named(cs.activation).value().activation;
  std::vector<double> y(static_cast<size_t>(cs.x[0] * m_n * oh_n * ow_n));
  for (int64_t n = 0; n < cs.x[0]; ++n) {
    for (int64_t m = 0; m < m_n; ++m) {
      double* plane = y.data() + (n * m_n + m) * oh_n * ow_n;
      for (int64_t p = 0; p < oh_n * ow_n; ++p) plane[p] = cs.bias ? b[m] : 0.0;
      for (int64_t c = 0; c < c_n; ++c) {
        for (int64_t ih = 0; ih < ih_n; ++ih) {
          for (int64_t iw = 0; iw < iw_n; ++iw) {
            const double xv = x[((n * c_n + c) * ih_n + ih) * iw_n + iw];
            for (int64_t kh = 0; kh < kh_n; ++kh) {
              const int64_t oh = ih * g.strides[0] - g.pads_begin[0] + kh * g.dilations[0];
              if (oh < 0 || oh >= oh_n) continue;
              for (int64_t kw = 0; kw < kw_n; ++kw) {
                const int64_t ow = iw * g.strides[1] - g.pads_begin[1] + kw * g.dilations[1];
                if (ow < 0 || ow >= ow_n) continue;
                plane[oh * ow_n + ow] += xv * w[((c * m_n + m) * kh_n + kh) * kw_n + kw];
              }
            }
          }
        }
      }
    }
  }
  std::vector<float> out(y.size());
  for (size_t i = 0; i < y.size(); ++i) out[i] = ActivationScalar(act, static_cast<float>(y[i]));
  return out;
}

void RunTransposeCase(const TransposeCase& cs, int threads) {
  SCOPED_TRACE("X " + ShapeToString(cs.x) + " W " + ShapeToString(cs.w) + " threads " + std::to_string(threads));
  const std::vector<float> x = Random(ElementCount(cs.x), 11), w = Random(ElementCount(cs.w), 12),
                           b = Random(cs.w[1], 13);
  TransposeAttributes attrs;
  attrs.conv.strides = cs.strides;
  attrs.conv.pads = cs.pads;
  attrs.conv.dilations = cs.dilations;
  attrs.output_padding = cs.output_padding;
  attrs.output_shape = cs.output_shape;
  const TransposeGeometry g = ComputeTransposeGeometry(attrs, cs.x, cs.w).value();
  const Shape y_shape = {cs.x[0], cs.w[1], g.out_spatial[0], g.out_spatial[1]};
  const Tensor want = ToBlockedRef(Tensor::FromVector<float>(y_shape, ReferenceTranspose(cs, g, x, w, b)));

  OpTest test("BlockedConvTranspose", 1, "com.onnxflow");
  test.Input(ToBlockedRef(Tensor::FromVector<float>(cs.x, x))).Input(Tensor::FromVector<float>(cs.w, w)).ConstantInput(1);
  if (cs.bias) test.Input(Tensor::FromVector<float>({cs.w[1]}, b)).ConstantInput(2);
  SetAttrs(cs, &test);
  if (!cs.activation.empty()) test.Attr("activation", cs.activation);
  test.Threads(threads);
  Result<Tensor> y = RunOne(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  // Pad output lanes too: act(0 + 0) = 0, as ToBlockedRef's.
  EXPECT_TRUE(TensorsNear(want, *y, 1e-4, 1e-4));
}

class BlockedConvTransposeTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(BlockedConvTransposeTest);

TEST_P(BlockedConvTransposeTest, MatchesTheDefinition) {
  for (int threads : {1, 2}) {
    // A style network's up-sampling: 3x3 stride 2, pad 1, output_padding 1 (7x5 -> 14x10).
    RunTransposeCase({{1, 32, 7, 5}, {32, 64, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, {1, 1}, {}, true, "Relu"}, threads);
    // DCGAN's 4x4 stride 2 pad 1; 24 input channels and 40 output channels (pad lanes both sides).
    RunTransposeCase({{1, 24, 6, 6}, {24, 40, 4, 4}, {2, 2}, {1, 1, 1, 1}, {}, {}, {}, false, "Tanh"}, threads);
    // Images smaller than the kernel (the pixel-by-pixel path): DCGAN's first layer, a 1-pixel
    // latent of 100 channels to 4x4; a 2x1 image through 3x3 taps of stride 2 with pads and a Relu.
    RunTransposeCase({{1, 100, 1, 1}, {100, 64, 4, 4}}, threads);
    RunTransposeCase({{2, 16, 2, 1}, {16, 32, 3, 3}, {2, 2}, {1, 0, 0, 1}, {}, {}, {}, true, "Relu"}, threads);
    // A U-Net's 2x2 stride 2 (each phase one tap), two images, 80 outputs: a group of 64 and one of 16.
    RunTransposeCase({{2, 16, 5, 6}, {16, 80, 2, 2}, {2, 2}}, threads);
    // Stride 1 (one phase: a convolution by the flipped kernel), a long row of several tiles.
    RunTransposeCase({{1, 16, 4, 29}, {16, 32, 3, 3}, {}, {1, 1, 1, 1}}, threads);
    // A kernel smaller than the stride: phases with no taps hold the bias.
    RunTransposeCase({{1, 16, 3, 4}, {16, 16, 1, 1}, {3, 3}}, threads);
    // Unequal strides, dilations, asymmetric pads, output_padding.
    RunTransposeCase({{1, 16, 5, 4}, {16, 16, 3, 2}, {3, 2}, {0, 1, 2, 0}, {2, 1}, {1, 0}}, threads);
    // output_shape (pads split from it), larger than the input's full output on one axis.
    RunTransposeCase({{1, 16, 5, 5}, {16, 16, 5, 5}, {2, 2}, {}, {}, {}, {13, 12}}, threads);
    // 1280 input channels of 4 taps a phase: 1.3 MB of a group's weights, chunks of input blocks
    // on any core with less than 2.6 MB of L2, each adding into what the one before wrote.
    RunTransposeCase({{1, 1280, 4, 4}, {1280, 16, 4, 4}, {2, 2}, {1, 1, 1, 1}}, threads);
  }
}

TEST(BlockedConvTransposeRefusalTest, RefusesWhatItCannotRun) {
  OpTest groups("BlockedConvTranspose", 1, "com.onnxflow");
  groups.Input(Tensor(DataType::kFloat, {1, 2, 2, 2, 16})).Input(Tensor(DataType::kFloat, {32, 16, 2, 2}));
  groups.ConstantInput(1).Attr("group", int64_t{2});
  EXPECT_TRUE(Refused(RunOne(groups), StatusCode::kInvalidArgument, "BlockedConvTranspose: needs group 1"));
  OpTest run_time_w("BlockedConvTranspose", 1, "com.onnxflow");
  run_time_w.Input(Tensor(DataType::kFloat, {1, 1, 2, 2, 16})).Input(Tensor(DataType::kFloat, {16, 16, 2, 2}));
  EXPECT_TRUE(Refused(RunOne(run_time_w), StatusCode::kInvalidArgument, "W must be a constant float"));
  OpTest wrong_blocks("BlockedConvTranspose", 1, "com.onnxflow");  // W of 32 channels, X of one block
  wrong_blocks.Input(Tensor(DataType::kFloat, {1, 1, 2, 2, 16})).Input(Tensor(DataType::kFloat, {32, 16, 2, 2}));
  wrong_blocks.ConstantInput(1);
  EXPECT_TRUE(Refused(RunOne(wrong_blocks), StatusCode::kInvalidArgument, "has 1 channel blocks, W [32,16,2,2] needs 2"));
  OpTest negative("BlockedConvTranspose", 1, "com.onnxflow");  // pads past the whole output
  negative.Input(Tensor(DataType::kFloat, {1, 1, 2, 2, 16})).Input(Tensor(DataType::kFloat, {16, 16, 2, 2}));
  negative.ConstantInput(1).Attr("pads", std::vector<int64_t>{3, 0, 3, 0});
  EXPECT_TRUE(Refused(RunOne(negative), StatusCode::kInvalidArgument, "leaves a negative output size"));
}

// Element (n, c, h, w) of a blocked tensor of `channels` real channels, as NCHW.
Tensor FromBlockedRef(const Tensor& blocked, int64_t channels) {
  const int64_t n_n = blocked.dim(0), blocks = blocked.dim(1), pixels = blocked.dim(2) * blocked.dim(3);
  Tensor out(DataType::kFloat, {n_n, channels, blocked.dim(2), blocked.dim(3)});
  for (int64_t n = 0; n < n_n; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t p = 0; p < pixels; ++p) {
        out.mutable_data<float>()[(n * channels + c) * pixels + p] =
            blocked.data<float>()[((n * blocks + c / kChannelBlock) * pixels + p) * kChannelBlock + c % kChannelBlock];
      }
    }
  }
  return out;
}

// numpy.pad of the spatial axes, one mode.
Tensor ReferencePad(const Tensor& x, const std::string& mode, const std::vector<int64_t>& p, float value) {
  const int64_t h_n = x.dim(2), w_n = x.dim(3), oh_n = h_n + p[0] + p[2], ow_n = w_n + p[1] + p[3];
  Tensor y(DataType::kFloat, {x.dim(0), x.dim(1), oh_n, ow_n});
  auto source = [&](int64_t o, int64_t before, int64_t n) -> int64_t {
    const int64_t i = o - before;
    if (i >= 0 && i < n) return i;
    if (mode == "constant") return -1;
    if (mode == "edge") return i < 0 ? 0 : n - 1;
    return i < 0 ? -i : 2 * (n - 1) - i;
  };
  for (int64_t plane = 0; plane < x.dim(0) * x.dim(1); ++plane) {
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      for (int64_t ow = 0; ow < ow_n; ++ow) {
        const int64_t ih = source(oh, p[0], h_n), iw = source(ow, p[1], w_n);
        y.mutable_data<float>()[(plane * oh_n + oh) * ow_n + ow] =
            ih < 0 || iw < 0 ? value : x.data<float>()[(plane * h_n + ih) * w_n + iw];
      }
    }
  }
  return y;
}

TEST(BlockedPadTest, MatchesNumpyPad) {
  struct Case {
    Shape x;
    std::string mode;
    std::vector<int64_t> pads;  // top, left, bottom, right
    float value;
    int threads;
  };
  const Case cases[] = {
      {{1, 32, 9, 8}, "reflect", {4, 4, 4, 4}, 0.0f, 1},   // a 9x9 convolution's padding
      {{2, 20, 5, 7}, "reflect", {1, 0, 2, 3}, 0.0f, 2},   // asymmetric, pad lanes, two images
      {{1, 16, 4, 3}, "edge", {2, 3, 0, 1}, 0.0f, 1},
      {{1, 48, 64, 40}, "constant", {1, 2, 3, 0}, -1.5f, 2},  // rows split over cores
      {{1, 16, 1, 1}, "edge", {2, 2, 2, 2}, 0.0f, 1},
  };
  for (const Case& cs : cases) {
    SCOPED_TRACE(cs.mode + " " + ShapeToString(cs.x));
    const Tensor x = Tensor::FromVector<float>(cs.x, Random(ElementCount(cs.x), 21));
    OpTest test("BlockedPad", 1, "com.onnxflow");
    test.Input(ToBlockedRef(x)).Attr("mode", cs.mode).Attr("pads", cs.pads).Attr("value", cs.value).Threads(cs.threads);
    Result<Tensor> y = RunOne(test);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(ReferencePad(x, cs.mode, cs.pads, cs.value), FromBlockedRef(*y, cs.x[1])));
    for (int64_t i = 0; i < y->size(); ++i) ASSERT_TRUE(std::isfinite(y->data<float>()[i])) << "lane " << i;
  }
}

TEST(BlockedPadTest, RefusesWhatItCannotRun) {
  OpTest too_far("BlockedPad", 1, "com.onnxflow");  // reflect needs pads below H
  too_far.Input(Tensor(DataType::kFloat, {1, 1, 2, 5, 16})).Attr("mode", std::string("reflect"));
  too_far.Attr("pads", std::vector<int64_t>{2, 0, 0, 0});
  EXPECT_TRUE(Refused(RunOne(too_far), StatusCode::kInvalidArgument, "must be smaller than the input's H and W"));
  OpTest wrap("BlockedPad", 1, "com.onnxflow");
  wrap.Input(Tensor(DataType::kFloat, {1, 1, 2, 5, 16})).Attr("mode", std::string("wrap"));
  wrap.Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  EXPECT_TRUE(Refused(RunOne(wrap), StatusCode::kInvalidArgument, "mode must be constant, reflect or edge"));
  OpTest crop("BlockedPad", 1, "com.onnxflow");
  crop.Input(Tensor(DataType::kFloat, {1, 1, 2, 5, 16})).Attr("pads", std::vector<int64_t>{0, -1, 0, 0});
  EXPECT_TRUE(Refused(RunOne(crop), StatusCode::kInvalidArgument, "none negative"));
  OpTest plain("BlockedPad", 1, "com.onnxflow");
  plain.Input(Tensor(DataType::kFloat, {1, 16, 2, 5})).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  EXPECT_TRUE(Refused(RunOne(plain), StatusCode::kInvalidArgument, "is not channel-blocked"));
}

}  // namespace
}  // namespace onnxflow
