// Conv and FusedConv against the direct-loop reference over strides, pads, dilations, groups,
// auto_pad, 1-D/2-D/3-D, constant and run-time weights, every float type, and error paths.
#include <random>
#include <vector>

#include <gtest/gtest.h>


#include "ops/framework/every_target.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/framework/testing.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/fused_activation.h"
#include "ops/math/gemm.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

class ConvTarget : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(ConvTarget);

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct ConvCase {
  Shape x, w;
  std::vector<int64_t> strides, pads, dilations;
  int64_t group = 1;
  std::string auto_pad;
  bool bias = true;
};

Tensor Reference(const ConvCase& cs, const std::vector<float>& x, const std::vector<float>& w,
                 const std::vector<float>& b, const ActivationSpec& act) {
  ConvAttributes attrs;
  attrs.strides = cs.strides;
  attrs.pads = cs.pads;
  attrs.dilations = cs.dilations;
  attrs.group = cs.group;
  attrs.auto_pad = ParseAutoPad(cs.auto_pad).value();
  ConvGeometry g = ComputeConvGeometry(attrs, cs.x, cs.w).value();
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end()), bd(b.begin(), b.end());
  std::vector<double> y(ElementCount(g.output_shape()));
  DirectConv<double, double, double>(g, xd.data(), wd.data(), cs.bias ? bd.data() : nullptr, 0.0, nullptr, y.data());
  std::vector<float> yf(y.size());
  for (size_t i = 0; i < y.size(); ++i) yf[i] = ActivationScalar(act, static_cast<float>(y[i]));
  return Tensor::FromVector<float>(g.output_shape(), yf);
}

void RunCase(const ConvCase& cs, bool constant_w, int threads = 1, const std::string& activation = "") {
  const std::vector<float> x = Random(ElementCount(cs.x), 1), w = Random(ElementCount(cs.w), 2),
                           b = Random(cs.w[0], 3);
  ActivationSpec act = FusedActivationSpec::Named(activation).value().activation;
  OpTest test(activation.empty() ? "Conv" : "FusedConv", activation.empty() ? 22 : 1,
              activation.empty() ? "" : "com.onnxflow");
  test.Input(Tensor::FromVector<float>(cs.x, x)).Input(Tensor::FromVector<float>(cs.w, w));
  if (cs.bias) test.Input(Tensor::FromVector<float>({cs.w[0]}, b));
  if (constant_w) test.ConstantInput(1);
  if (!cs.strides.empty()) test.Attr("strides", cs.strides);
  if (!cs.pads.empty()) test.Attr("pads", cs.pads);
  if (!cs.dilations.empty()) test.Attr("dilations", cs.dilations);
  if (cs.group != 1) test.Attr("group", cs.group);
  if (!cs.auto_pad.empty()) test.Attr("auto_pad", cs.auto_pad);
  if (!activation.empty()) test.Attr("activation", activation);
  test.Threads(threads);
  auto out = test.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Reference(cs, x, w, b, act), (*out)[0].tensor(), 1e-4, 1e-4))
      << "x=" << ShapeToString(cs.x) << " w=" << ShapeToString(cs.w);
}

TEST(ConvTest, MatchesReference) {
  const std::vector<ConvCase> cases = {
      {{1, 1, 5, 5}, {1, 1, 3, 3}, {}, {1, 1, 1, 1}},
      {{2, 3, 7, 9}, {5, 3, 3, 3}, {2, 2}, {1, 0, 2, 1}},
      {{1, 4, 10, 11}, {6, 2, 3, 2}, {1, 2}, {}, {2, 1}, 2},
      {{1, 8, 9, 9}, {8, 1, 3, 3}, {}, {1, 1, 1, 1}, {}, 8},                 // depthwise
      {{2, 4, 11, 40}, {8, 1, 3, 5}, {2, 1}, {0, 1, 2, 3}, {2, 1}, 4},        // depthwise x2, dilated
      {{1, 3, 6, 7}, {3, 1, 2, 2}, {2, 3}, {}, {}, 3, "SAME_UPPER"},          // depthwise, strided
      {{1, 6, 11, 13}, {6, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 6},            // depthwise, column stride 2
      {{1, 3, 6, 71}, {3, 1, 3, 3}, {2, 2}, {1, 0, 1, 2}, {}, 3},              // the same, rows past two vectors
      {{1, 4, 10, 12}, {8, 1, 3, 3}, {1, 2}, {0, 2, 1, 1}, {1, 2}, 4},       // the same, dilated, x2
      {{1, 5, 9, 40}, {5, 1, 5, 5}, {1, 1}, {2, 2, 2, 2}, {}, 5},            // 5x5, rows over a vector
      {{1, 16, 7, 7}, {33, 16, 1, 1}, {}, {}, {}, 1},                        // pointwise
      {{1, 3, 13, 12}, {4, 3, 3, 3}, {2, 2}, {}, {}, 1, "SAME_UPPER"},
      {{1, 3, 7, 69}, {4, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}},                   // column phases past two vectors
      {{1, 3, 13, 12}, {4, 3, 4, 4}, {3, 2}, {}, {}, 1, "SAME_LOWER"},
      {{1, 3, 13, 12}, {4, 3, 3, 3}, {2, 2}, {}, {}, 1, "VALID", false},
      {{2, 3, 50}, {4, 3, 5}, {3}, {2, 1}, {2}},                              // 1-D
      // 1-D with 16 or more (channel, tap) columns: output channels in the lanes (PixelGather on
      // a plane of height 1). An STFT's 5 frames, dilated with uneven pads, stride 1 with pads.
      {{1, 1, 1152}, {17, 1, 512}, {160}, {}},
      {{2, 4, 40}, {6, 4, 5}, {2}, {3, 1}, {2}},
      {{1, 16, 33}, {24, 16, 3}, {}, {1, 1}},
      {{1, 2, 5, 6, 7}, {3, 2, 2, 3, 2}, {1, 2, 1}, {1, 0, 1, 0, 1, 1}},     // 3-D (gathered: 24 columns)
      {{2, 3, 6, 7, 8}, {5, 3, 3, 3, 3}, {2, 1, 2}, {1, 0, 1, 1, 2, 0}, {1, 2, 1}},  // 3-D, dilated, uneven pads
      {{1, 8, 3, 4, 5}, {6, 8, 1, 1, 1}, {}, {}},                             // 3-D pointwise (not gathered)
      {{1, 64, 20, 20}, {70, 64, 3, 3}, {}, {1, 1, 1, 1}},                   // several strips and K blocks
      // Stride 1 (the shifted-image path): dilated with uneven pads, 5x5, a 3x1 kernel whose grid
      // is the output, groups, and a kernel too wide for it (falls back to im2col).
      {{1, 5, 9, 13}, {7, 5, 3, 3}, {}, {0, 2, 1, 0}, {2, 2}},
      {{1, 3, 8, 8}, {4, 3, 5, 5}, {}, {2, 2, 2, 2}},
      {{1, 3, 12, 12}, {4, 3, 3, 1}, {}, {1, 0, 1, 0}},
      {{2, 4, 6, 6}, {6, 2, 3, 3}, {}, {1, 1, 1, 1}, {}, 2},
      {{1, 2, 6, 6}, {3, 2, 5, 5}, {}, {}},
      // Small output maps with many channels: 3x3, pointwise, strided.
      {{1, 9, 7, 7}, {600, 9, 3, 3}, {}, {1, 1, 1, 1}},
      {{2, 20, 5, 6}, {64, 20, 1, 1}, {}, {}},
      {{1, 12, 9, 9}, {50, 12, 1, 1}, {2, 2}, {}},
      // Stride 1 with 288 to 576 (channel, tap) columns: packed both ways; a map of at most 400
      // pixels gathers its pixels (output channels in the lanes), a larger one takes the shifted image.
      {{1, 48, 13, 13}, {20, 48, 3, 3}, {}, {1, 1, 1, 1}},
      {{1, 48, 21, 20}, {20, 48, 3, 3}, {}, {1, 1, 1, 1}},
      // Maps of a few columns (unfolded element by element), rows of (channel, tap) stepped across
      // K blocks that end inside a channel's taps (a head's 2 outputs over 128 channels on 2 x 2;
      // strided and dilated with uneven pads; a map one column wide), and the first run too long
      // for that path (9 columns).
      {{1, 128, 2, 2}, {2, 128, 3, 3}, {}, {1, 1, 1, 1}},
      {{1, 20, 5, 4}, {6, 20, 3, 3}, {2, 3}, {2, 0, 1, 2}, {2, 1}},
      {{1, 29, 6, 1}, {3, 29, 3, 3}, {1, 1}, {1, 1, 1, 1}},
      {{1, 30, 4, 18}, {5, 30, 3, 3}, {1, 2}, {1, 1, 1, 1}},
  };
  for (const ConvCase& cs : cases) {
    RunCase(cs, false);
    RunCase(cs, true);
  }
  RunCase(cases.back(), true, 2);
  RunCase(cases[3], true, 2);
  // Shifted image on two cores: the GEMM's column blocks (5 strips) end inside grid rows (32 wide),
  // and each block is compacted, biased and activated by the task that computed it.
  RunCase({{1, 16, 30, 30}, {64, 16, 3, 3}, {}, {1, 1, 1, 1}}, true, 2, "Relu");
  RunCase({{1, 64, 13, 13}, {100, 64, 3, 3}, {}, {1, 1, 1, 1}}, true, 2, "Relu");  // gathered on two cores
  RunCase({{1, 64, 300}, {40, 64, 3}, {2}, {1, 1}}, true, 2, "Relu");  // 1-D, gathered on two cores
  // Many groups on the shifted image, split over two cores: every group reads its rows of one
  // padded copy per image (RegNet's groups of 8 on 7 x 7; two images; a grid wider than the output).
  RunCase({{2, 448, 7, 7}, {448, 8, 3, 3}, {}, {1, 1, 1, 1}, {}, 56}, true, 2, "Relu");
  RunCase({{1, 64, 9, 11}, {32, 4, 3, 3}, {}, {1, 1, 1, 1}, {}, 16}, false, 2);
  RunCase({{2, 24, 10, 10}, {24, 3, 3, 3}, {}, {2, 0, 1, 2}, {2, 1}, 8}, true, 1);
  // Depthwise on two cores: ShuffleNet's 14x14 layer shape, its channels split in chunks.
  RunCase({{1, 272, 14, 14}, {272, 1, 3, 3}, {}, {1, 1, 1, 1}, {}, 272}, true, 2, "Relu");
}

TEST(ConvTest, FusedActivations) {
  const ConvCase cs{{1, 3, 9, 9}, {5, 3, 3, 3}, {}, {1, 1, 1, 1}};
  for (const char* act : {"Relu", "LeakyRelu", "Clip", "Sigmoid", "Tanh", "HardSigmoid"}) RunCase(cs, true, 1, act);
}

// Depthwise convolutions on every compiled CPU target (AVX-512 and AVX2 read the image with
// masked taps, the others through a padded copy or the row loop): ShuffleNet's and MobileNet's
// shapes, rows of one to several vectors, strides 1, 2 and 3, uneven pads, dilation, a channel
// multiplier, and fused activations.
TEST_P(ConvTarget, Depthwise) {
  const ConvCase cases[] = {
      {{1, 3, 56, 56}, {3, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 3},
      {{1, 4, 28, 28}, {4, 1, 3, 3}, {}, {1, 1, 1, 1}, {}, 4},
      {{1, 2, 7, 7}, {2, 1, 3, 3}, {}, {1, 1, 1, 1}, {}, 2},
      {{2, 2, 14, 37}, {4, 1, 3, 3}, {2, 2}, {0, 2, 1, 1}, {}, 2},
      {{1, 2, 9, 50}, {2, 1, 5, 5}, {1, 1}, {2, 1, 2, 3}, {2, 2}, 2},
      {{1, 2, 13, 40}, {2, 1, 3, 3}, {3, 3}, {1, 1, 1, 1}, {}, 2},
      {{1, 2, 5, 3}, {2, 1, 3, 3}, {}, {2, 2, 2, 2}, {}, 2},  // pads wider than the row
      // 1-D, a plane of height 1 (audio models): Silero VAD's 258 channels of 8 steps, kernel 5;
      // a stride 2 with a channel multiplier; dilated with uneven pads past two vectors.
      {{1, 258, 8}, {258, 1, 5}, {}, {2, 2}, {}, 258},
      {{2, 3, 41}, {6, 1, 4}, {2}, {1, 2}, {}, 3},
      {{1, 2, 70}, {2, 1, 3}, {}, {0, 3}, {3}, 2},
  };
  for (const ConvCase& cs : cases) {
    RunCase(cs, true);
    RunCase(cs, true, 1, "LeakyRelu");
  }
}

// A column stride of 2 splits the image into even and odd columns first (column_phases-inl.h):
// rows shorter than a vector, one vector and a tail, and past two vectors.
TEST_P(ConvTarget, ColumnPhases) {
  const ConvCase cases[] = {
      {{1, 3, 7, 69}, {4, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}},
      {{1, 2, 6, 5}, {3, 2, 3, 3}, {2, 2}, {}},
      {{1, 2, 9, 37}, {3, 2, 3, 3}, {1, 2}, {1, 0, 1, 2}},
      {{1, 3, 13, 12}, {4, 3, 4, 4}, {3, 2}, {}, {}, 1, "SAME_LOWER"},
  };
  for (const ConvCase& cs : cases) RunCase(cs, true);
}

// FusedConv with a residual input Z: act(conv(X) + Z), Z of Y's shape (added in the GEMM epilogue
// or at the compaction) or broadcasting (added afterwards, in the broadcast shape).
TEST(ConvTest, FusedResidual) {
  const ConvCase cases[] = {
      {{1, 16, 7, 7}, {33, 16, 1, 1}, {}, {}},                 // pointwise
      {{1, 5, 9, 13}, {7, 5, 3, 3}, {}, {1, 1, 1, 1}},         // shifted image, compacted
      {{1, 32, 9, 9}, {7, 32, 3, 3}, {}, {1, 1, 1, 1}},        // small map, pixels gathered
      {{1, 3, 12, 12}, {4, 3, 3, 1}, {}, {1, 0, 1, 0}},        // shifted image, grid is Y
      {{2, 3, 13, 12}, {4, 3, 3, 3}, {2, 2}, {1, 1, 1, 1}},    // im2col
      {{1, 8, 9, 9}, {8, 1, 3, 3}, {}, {1, 1, 1, 1}, {}, 8},   // depthwise
      {{1, 4, 30, 30}, {4, 1, 3, 3}, {2, 2}, {1, 1, 1, 1}, {}, 4},  // depthwise, stride 2
      {{1, 8, 30}, {12, 8, 3}, {2}, {1, 1}},                   // 1-D, gathered
      {{1, 4, 5, 6, 7}, {6, 4, 3, 3, 3}, {}, {1, 1, 1, 1, 1, 1}},  // 3-D, gathered
  };
  for (const ConvCase& cs : cases) {
    ConvAttributes attrs;
    attrs.strides = cs.strides;
    attrs.pads = cs.pads;
    attrs.group = cs.group;
    const Shape y_shape = ComputeConvGeometry(attrs, cs.x, cs.w).value().output_shape();
    // Z of Y's shape, per channel ([C, 1, ...]), and one that broadcasts Y to a new leading axis.
    Shape per_channel(y_shape.size() - 1, 1), wider(y_shape.size() + 1, 1);
    per_channel[0] = y_shape[1];
    wider[0] = 2, wider[1] = y_shape[0], wider[2] = y_shape[1];
    for (const Shape& z_shape : {y_shape, per_channel, wider}) {
      const std::vector<float> x = Random(ElementCount(cs.x), 1), w = Random(ElementCount(cs.w), 2),
                               b = Random(cs.w[0], 3), z = Random(ElementCount(z_shape), 4);
      OpTest test("FusedConv", 1, "com.onnxflow");
      test.Input(Tensor::FromVector<float>(cs.x, x))
          .Input(Tensor::FromVector<float>(cs.w, w))
          .Input(Tensor::FromVector<float>({cs.w[0]}, b))
          .Input(Tensor::FromVector<float>(z_shape, z))
          .ConstantInput(1)
          .Attr("activation", std::string("Relu"));
      if (!cs.strides.empty()) test.Attr("strides", cs.strides);
      if (!cs.pads.empty()) test.Attr("pads", cs.pads);
      if (cs.group != 1) test.Attr("group", cs.group);
      auto out = test.Run(RegisterMathKernels);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      // Expected: relu(conv + z) with numpy broadcasting, from the reference conv.
      const Tensor conv = Reference(cs, x, w, b, ActivationSpec{});
      const Shape shape = BroadcastShapes(y_shape, z_shape).value();
      const std::vector<int64_t> sc = BroadcastStrides(y_shape, shape), sz = BroadcastStrides(z_shape, shape);
      std::vector<float> expected(ElementCount(shape));
      std::vector<int64_t> index(shape.size(), 0);
      for (float& e : expected) {
        int64_t oc = 0, oz = 0;
        for (size_t d = 0; d < shape.size(); ++d) {
          oc += index[d] * sc[d];
          oz += index[d] * sz[d];
        }
        e = std::max(0.0f, conv.data<float>()[oc] + z[oz]);
        for (size_t d = shape.size(); d-- > 0;) {
          if (++index[d] < shape[d]) break;
          index[d] = 0;
        }
      }
      EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(shape, expected), (*out)[0].tensor(), 1e-4, 1e-4))
          << "x=" << ShapeToString(cs.x) << " z=" << ShapeToString(z_shape);
    }
  }
}

TEST(ConvTest, Float16AndDouble) {
  const Shape xs = {1, 2, 4, 4}, ws = {3, 2, 3, 3};
  std::vector<float> x = Random(32, 4), w = Random(54, 5);
  std::vector<Float16> xh, wh;
  std::vector<double> xd(x.begin(), x.end()), wd(w.begin(), w.end());
  for (float v : x) xh.push_back(Float16{FloatToHalf(v)});
  for (float v : w) wh.push_back(Float16{FloatToHalf(v)});
  OpTest ref("Conv", 11);
  ref.Input(Tensor::FromVector<double>(xs, xd)).Input(Tensor::FromVector<double>(ws, wd)).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto rd = ref.Run(RegisterMathKernels);
  ASSERT_TRUE(rd.ok()) << rd.status().ToString();
  const double* r = (*rd)[0].tensor().data<double>();
  OpTest half("Conv", 11);
  half.Input(Tensor::FromVector<Float16>(xs, xh)).Input(Tensor::FromVector<Float16>(ws, wh)).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  auto rh = half.Run(RegisterMathKernels);
  ASSERT_TRUE(rh.ok()) << rh.status().ToString();
  ASSERT_EQ((*rh)[0].tensor().dtype(), DataType::kFloat16);
  const Float16* h = (*rh)[0].tensor().data<Float16>();
  for (int64_t i = 0; i < 48; ++i) EXPECT_NEAR(r[i], HalfToFloat(h[i].bits), 1e-2);
  // Spot-check one double value by hand: output (0, 0, 0, 0) sees x[c, 0..1, 0..1] and w[0, c, 1..2, 1..2].
  double expect = 0;
  for (int c = 0; c < 2; ++c)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) expect += xd[c * 16 + i * 4 + j] * wd[c * 9 + (i + 1) * 3 + (j + 1)];
  EXPECT_NEAR(expect, r[0], 1e-12);
}

// Geometries only a hostile model has, against the direct loop: a padded 3-D volume with an empty
// axis (the padded copy divided by its length), pads far past the input with strides stepping over
// them (PixelGather's padded copy would be terabytes), and a stride of INT64_MAX (one output pixel;
// the unfolding's ceil division overflowed). Constant W takes PixelGather where it applies.
TEST(ConvTest, HostileGeometries) {
  struct Hostile {
    Shape x, w;
    std::vector<int64_t> strides, pads;
  };
  const int64_t kMax = INT64_MAX;
  for (const Hostile& h : std::vector<Hostile>{
           {{1, 4, 3, 3, 0}, {2, 4, 3, 3, 1}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},
           {{1, 4, 0, 3, 3}, {2, 4, 1, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},
           {{1, 8, 4}, {4, 8, 3}, {int64_t{1} << 31}, {1 << 30, 1 << 30}},
           {{1, 4, 3, 3, 3}, {2, 4, 3, 3, 3}, {4000, 4000, 4000}, {1000, 1000, 1000, 1000, 1000, 1000}},
           {{1, 32, 3, 3}, {8, 32, 3, 3}, {kMax, kMax}, {1, 1, 1, 1}},
       }) {
    ConvAttributes attrs;
    attrs.strides = h.strides;
    attrs.pads = h.pads;
    const ConvGeometry g = ComputeConvGeometry(attrs, h.x, h.w).value();
    const Tensor x = Tensor::FromVector<float>(h.x, Random(ElementCount(h.x), 3));
    const Tensor w = Tensor::FromVector<float>(h.w, Random(ElementCount(h.w), 4));
    std::vector<float> expected(static_cast<size_t>(ElementCount(g.output_shape())));
    DirectConv<float, float, float>(g, x.data<float>(), w.data<float>(), nullptr, 0.0f, nullptr, expected.data());
    for (bool constant : {true, false}) {
      OpTest t("Conv", 22);
      t.Input(x).Input(w).Attr("strides", h.strides).Attr("pads", h.pads);
      if (constant) t.ConstantInput(1);
      auto y = t.Run(RegisterMathKernels);
      ASSERT_TRUE(y.ok()) << ShapeToString(h.x) << ": " << y.status().ToString();
      EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(g.output_shape(), expected), (*y)[0].tensor()))
          << ShapeToString(h.x) << (constant ? " constant W" : " W at run time");
    }
  }
}

TEST(ConvTest, Errors) {
  OpTest bad_channels("Conv", 22);
  bad_channels.Input(Tensor(DataType::kFloat, {1, 3, 5, 5})).Input(Tensor(DataType::kFloat, {2, 2, 3, 3}));
  EXPECT_TRUE(Refused(bad_channels.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "W [2,2,3,3] expects 2 input channels, X [1,3,5,5] has 3"));
  OpTest too_small("Conv", 22);
  too_small.Input(Tensor(DataType::kFloat, {1, 1, 2, 2})).Input(Tensor(DataType::kFloat, {1, 1, 3, 3}));
  EXPECT_TRUE(Refused(too_small.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "the kernel (extent 3) does not fit the padded input (2) on spatial axis 0"));
  OpTest bad_bias("Conv", 22);
  bad_bias.Input(Tensor(DataType::kFloat, {1, 1, 3, 3})).Input(Tensor(DataType::kFloat, {2, 1, 3, 3}))
      .Input(Tensor(DataType::kFloat, {3}));
  EXPECT_TRUE(Refused(bad_bias.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "Conv: B has 3 values for 2 output channels"));
  // Attributes whose extents pass INT64_MAX: refused by name, not wrapped into a negative size.
  OpTest huge_dilation("Conv", 22);
  huge_dilation.Input(Tensor(DataType::kFloat, {1, 1, 4})).Input(Tensor(DataType::kFloat, {1, 1, 3}))
      .Attr("dilations", std::vector<int64_t>{int64_t{1} << 62});
  EXPECT_TRUE(Refused(huge_dilation.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "attribute 'dilations' (4611686018427387904) makes the kernel on spatial axis 0 longer than any input"));
  OpTest huge_pads("Conv", 22);
  huge_pads.Input(Tensor(DataType::kFloat, {1, 1, 4, 4, 4})).Input(Tensor(DataType::kFloat, {1, 1, 3, 3, 3}))
      .Attr("pads", std::vector<int64_t>(6, INT64_MAX));
  EXPECT_TRUE(Refused(huge_pads.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "attribute 'pads' (9223372036854775807, 9223372036854775807) on spatial axis 0 makes the padded input longer than any tensor"));
  // The residual input Z (added by the graph pass for float models only) must be float.
  OpTest bad_residual("FusedConv", 1, "com.onnxflow");
  bad_residual.Input(Tensor(DataType::kFloat, {1, 1, 3, 3}))
      .Input(Tensor(DataType::kFloat, {1, 1, 3, 3}))
      .AbsentInput()
      .Input(Tensor(DataType::kDouble, {1, 1, 1, 1}));
  auto residual = bad_residual.Run(RegisterMathKernels);
  ASSERT_TRUE(Refused(residual, StatusCode::kInvalidArgument, "FusedConv: the residual input needs float X and Z"));
  EXPECT_NE(residual.status().message().find("residual"), std::string::npos) << residual.status().ToString();
  OpTest bad_act("FusedConv", 1, "com.onnxflow");
  bad_act.Input(Tensor(DataType::kFloat, {1, 1, 3, 3})).Input(Tensor(DataType::kFloat, {1, 1, 3, 3}))
      .Attr("activation", std::string("Mish"));
  auto act = bad_act.Run(RegisterMathKernels);
  ASSERT_TRUE(Refused(act, StatusCode::kInvalidArgument, "unknown fused activation 'Mish'"));
  EXPECT_NE(act.status().message().find("unknown fused activation 'Mish'"), std::string::npos) << act.status().ToString();
}

}  // namespace
}  // namespace onnxflow
