// ConvTranspose against a direct scatter loop: strides, pads, dilations, groups, output_padding,
// output_shape and auto_pad; float, float16 and double; error paths.
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

// 2-D scatter: y[n, g*mg + m, ih*s - pb + kh*d, ...] += x[n, c, ih, iw] * w[c, m, kh, kw].
std::vector<float> Reference(const Shape& xs, const Shape& ws, int64_t group, std::vector<int64_t> s,
                             std::vector<int64_t> d, std::vector<int64_t> pb, Shape ys, const std::vector<float>& x,
                             const std::vector<float>& w, const std::vector<float>& b) {
  const int64_t n_ = xs[0], c_ = xs[1], h = xs[2], wd = xs[3], mg = ws[1], kh_ = ws[2], kw_ = ws[3];
  const int64_t cg = c_ / group, oh = ys[2], ow = ys[3];
  std::vector<double> y(ElementCount(ys), 0.0);
  for (int64_t n = 0; n < n_; ++n)
    for (int64_t c = 0; c < c_; ++c)
      for (int64_t m = 0; m < mg; ++m)
        for (int64_t i = 0; i < h; ++i)
          for (int64_t j = 0; j < wd; ++j)
            for (int64_t a = 0; a < kh_; ++a)
              for (int64_t e = 0; e < kw_; ++e) {
                const int64_t oi = i * s[0] - pb[0] + a * d[0], oj = j * s[1] - pb[1] + e * d[1];
                if (oi < 0 || oi >= oh || oj < 0 || oj >= ow) continue;
                const int64_t om = (c / cg) * mg + m;
                y[((n * ys[1] + om) * oh + oi) * ow + oj] +=
                    static_cast<double>(x[((n * c_ + c) * h + i) * wd + j]) * w[((c * mg + m) * kh_ + a) * kw_ + e];
              }
  std::vector<float> out(y.size());
  for (size_t i = 0; i < y.size(); ++i) out[i] = static_cast<float>(y[i] + b[(i / (oh * ow)) % ys[1]]);
  return out;
}

struct Case {
  Shape x, w;
  int64_t group;
  std::vector<int64_t> strides, dilations, pads, output_padding, output_shape;
  std::string auto_pad;
  std::vector<int64_t> expect_pads_begin;
  Shape y;
};

TEST(ConvTransposeTest, MatchesScatterReference) {
  const std::vector<Case> cases = {
      {{1, 2, 3, 4}, {2, 3, 3, 3}, 1, {1, 1}, {1, 1}, {}, {}, {}, "", {0, 0}, {1, 3, 5, 6}},
      {{2, 4, 3, 3}, {4, 2, 2, 3}, 2, {2, 3}, {1, 1}, {1, 0, 0, 2}, {1, 1}, {}, "", {1, 0}, {2, 4, 6, 8}},
      {{1, 1, 4, 4}, {1, 2, 3, 3}, 1, {1, 1}, {2, 2}, {}, {}, {}, "", {0, 0}, {1, 2, 8, 8}},
      {{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {3, 2}, {1, 1}, {}, {}, {10, 8}, "", {0, 0}, {1, 2, 10, 8}},
      {{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {2, 2}, {1, 1}, {}, {}, {}, "SAME_UPPER", {0, 0}, {1, 2, 6, 6}},
      {{1, 1, 3, 3}, {1, 2, 3, 3}, 1, {2, 2}, {1, 1}, {}, {}, {}, "SAME_LOWER", {1, 1}, {1, 2, 6, 6}},
  };
  for (const Case& cs : cases) {
    const auto x = Random(ElementCount(cs.x), 1), w = Random(ElementCount(cs.w), 2);
    const auto b = Random(cs.y[1], 3);
    OpTest t("ConvTranspose", 22);
    t.Input(Tensor::FromVector<float>(cs.x, x)).Input(Tensor::FromVector<float>(cs.w, w))
        .Input(Tensor::FromVector<float>({cs.y[1]}, b)).Attr("strides", cs.strides).Attr("dilations", cs.dilations);
    if (cs.group != 1) t.Attr("group", cs.group);
    if (!cs.pads.empty()) t.Attr("pads", cs.pads);
    if (!cs.output_padding.empty()) t.Attr("output_padding", cs.output_padding);
    if (!cs.output_shape.empty()) t.Attr("output_shape", cs.output_shape);
    if (!cs.auto_pad.empty()) t.Attr("auto_pad", cs.auto_pad);
    auto out = t.Run(RegisterMathKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    t.ConstantInput(1);  // the same with W packed at load
    auto packed = t.Run(RegisterMathKernels);
    ASSERT_TRUE(packed.ok()) << packed.status().ToString();
    EXPECT_TRUE(TensorsEqual((*out)[0].tensor(), (*packed)[0].tensor()));
    const auto expected = Reference(cs.x, cs.w, cs.group, cs.strides, cs.dilations, cs.expect_pads_begin, cs.y, x, w, b);
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(cs.y, expected), (*out)[0].tensor(), 1e-5, 1e-5))
        << ShapeToString(cs.x) << " " << cs.auto_pad;
  }
}

// A U-Net's upsampling (4x4, stride 2, pads 1) on two cores, its output channels split over the
// tasks that scatter them; and a 1-D transposed convolution, which runs as the plane of height 1 it
// is: the same numbers as the 2-D op on [N, C, 1, L].
TEST(ConvTransposeTest, UpsamplingOnTwoCoresAnd1D) {
  const Shape xs = {1, 8, 9, 7}, ws = {8, 6, 4, 4}, ys = {1, 6, 18, 14};
  const auto x = Random(ElementCount(xs), 4), w = Random(ElementCount(ws), 5), b = Random(6, 6);
  OpTest t("ConvTranspose", 22);
  t.Input(Tensor::FromVector<float>(xs, x)).Input(Tensor::FromVector<float>(ws, w)).Input(Tensor::FromVector<float>({6}, b));
  t.Attr("strides", std::vector<int64_t>{2, 2}).Attr("pads", std::vector<int64_t>{1, 1, 1, 1}).ConstantInput(1).Threads(2);
  auto out = t.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto expected = Reference(xs, ws, 1, {2, 2}, {1, 1}, {1, 1}, ys, x, w, b);
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(ys, expected), (*out)[0].tensor(), 1e-5, 1e-5));

  // 1-D: 16 taps, stride 8, pads 4 and 3; dilation 1, and 2 with output_padding 1. The reference
  // is the 2-D scatter on a plane of height 1.
  for (int64_t dilation : {1, 2}) {
    const Shape x1 = {2, 3, 11}, w1 = {3, 4, 16};
    const int64_t length = 8 * 10 + 15 * dilation + 1 + (dilation - 1) - 4 - 3;
    const auto xv = Random(ElementCount(x1), 7), wv = Random(ElementCount(w1), 8), bv = Random(4, 9);
    OpTest op("ConvTranspose", 22);
    op.Input(Tensor::FromVector<float>(x1, xv)).Input(Tensor::FromVector<float>(w1, wv)).Input(Tensor::FromVector<float>({4}, bv));
    op.Attr("strides", std::vector<int64_t>{8}).Attr("dilations", std::vector<int64_t>{dilation})
        .Attr("pads", std::vector<int64_t>{4, 3}).Attr("output_padding", std::vector<int64_t>{dilation - 1});
    auto one_d = op.Run(RegisterMathKernels);
    ASSERT_TRUE(one_d.ok()) << one_d.status().ToString();
    const auto plane = Reference({2, 3, 1, 11}, {3, 4, 1, 16}, 1, {1, 8}, {1, dilation}, {0, 4}, {2, 4, 1, length},
                                 xv, wv, bv);
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 4, length}, plane), (*one_d)[0].tensor(), 1e-5, 1e-5))
        << "dilation " << dilation;
  }
}

// A vocoder's upsampling as 1-D and as the height-1 plane graph/conv1d_as_2d.cc makes of it (the
// same numbers either way), W constant (packed at load) or not, groups, dilation, output_padding,
// one and two cores; and a 2-D kernel of one row over an image of several rows.
TEST(ConvTransposeTest, RowsAgainstTheScatterReference) {
  struct RowCase {
    Shape x, w;
    int64_t group, stride, dilation, pad_begin, pad_end, output_padding;
  };
  const std::vector<RowCase> cases = {
      {{1, 32, 25}, {32, 16, 16}, 1, 8, 1, 4, 4, 0},   // HiFi-GAN's 8x
      {{2, 8, 40}, {8, 4, 4}, 1, 2, 1, 1, 1, 0},       // 2x, two images
      {{1, 6, 17}, {6, 5, 6}, 3, 3, 1, 2, 1, 1},       // MelGAN's odd stride, three groups
      {{1, 4, 9}, {4, 3, 5}, 1, 2, 3, 0, 4, 1},        // dilated, pads past the taps
  };
  for (const RowCase& c : cases) {
    const int64_t in = c.x[2], k = c.w[2], m = c.w[1] * c.group;
    const int64_t length = c.stride * (in - 1) + c.output_padding + (k - 1) * c.dilation + 1 - c.pad_begin - c.pad_end;
    const auto x = Random(ElementCount(c.x), 11), w = Random(ElementCount(c.w), 12), b = Random(m, 13);
    const auto expected = Reference({c.x[0], c.x[1], 1, in}, {c.w[0], c.w[1], 1, k}, c.group, {1, c.stride},
                                    {1, c.dilation}, {0, c.pad_begin}, {c.x[0], m, 1, length}, x, w, b);
    for (bool plane : {false, true}) {
      for (bool constant : {false, true}) {
        for (int threads : {1, 2}) {
          const Shape xs = plane ? Shape{c.x[0], c.x[1], 1, in} : c.x, ws = plane ? Shape{c.w[0], c.w[1], 1, k} : c.w;
          auto two = [&](int64_t a, int64_t v) { return plane ? std::vector<int64_t>{a, v} : std::vector<int64_t>{v}; };
          OpTest t("ConvTranspose", 22);
          t.Input(Tensor::FromVector<float>(xs, x)).Input(Tensor::FromVector<float>(ws, w))
              .Input(Tensor::FromVector<float>({m}, b)).Attr("strides", two(1, c.stride))
              .Attr("dilations", two(1, c.dilation)).Attr("output_padding", two(0, c.output_padding)).Threads(threads);
          t.Attr("pads", plane ? std::vector<int64_t>{0, c.pad_begin, 0, c.pad_end}
                               : std::vector<int64_t>{c.pad_begin, c.pad_end});
          if (c.group != 1) t.Attr("group", c.group);
          if (constant) t.ConstantInput(1);
          auto out = t.Run(RegisterMathKernels);
          ASSERT_TRUE(out.ok()) << out.status().ToString();
          const Shape ys = plane ? Shape{c.x[0], m, 1, length} : Shape{c.x[0], m, length};
          EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(ys, expected), (*out)[0].tensor(), 1e-5, 1e-5))
              << ShapeToString(xs) << " W " << ShapeToString(ws) << (constant ? " constant" : "") << " threads "
              << threads;
        }
      }
    }
  }
  // A 1 x 3 kernel over 3 rows.
  const Shape xs = {1, 4, 3, 5}, ws = {4, 2, 1, 3}, ys = {1, 2, 3, 11};
  const auto x = Random(ElementCount(xs), 14), w = Random(ElementCount(ws), 15), b = Random(2, 16);
  OpTest t("ConvTranspose", 22);
  t.Input(Tensor::FromVector<float>(xs, x)).Input(Tensor::FromVector<float>(ws, w));
  t.Input(Tensor::FromVector<float>({2}, b));
  t.Attr("strides", std::vector<int64_t>{1, 2}).ConstantInput(1);
  auto out = t.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const auto expected = Reference(xs, ws, 1, {1, 2}, {1, 1}, {0, 0}, ys, x, w, b);
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(ys, expected), (*out)[0].tensor(), 1e-5, 1e-5));
}

TEST(ConvTransposeTest, DoubleAndFloat16) {
  // One input pixel of value 2 spreads the 2x2 kernel with stride 1: y = 2 * w.
  OpTest d("ConvTranspose", 11);
  d.Input(Tensor::FromVector<double>({1, 1, 1, 1}, {2})).Input(Tensor::FromVector<double>({1, 1, 2, 2}, {1, 2, 3, 4}));
  auto out = d.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<double>({1, 1, 2, 2}, {2, 4, 6, 8}), (*out)[0].tensor()));
  auto h = [](float v) { return Float16{FloatToHalf(v)}; };
  OpTest f("ConvTranspose", 22);
  f.Input(Tensor::FromVector<Float16>({1, 1, 1, 2}, {h(1), h(-1)}))
      .Input(Tensor::FromVector<Float16>({1, 1, 1, 2}, {h(1), h(2)}));
  out = f.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Float16* y = (*out)[0].tensor().data<Float16>();
  EXPECT_EQ(HalfToFloat(y[0].bits), 1.0f);
  EXPECT_EQ(HalfToFloat(y[1].bits), 1.0f);
  EXPECT_EQ(HalfToFloat(y[2].bits), -2.0f);
}

TEST(ConvTransposeTest, Errors) {
  OpTest t("ConvTranspose", 22);
  t.Input(Tensor(DataType::kFloat, {1, 3, 4, 4})).Input(Tensor(DataType::kFloat, {2, 1, 3, 3}));
  EXPECT_TRUE(Refused(t.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "ConvTranspose: W [2,1,3,3] does not match the 3 channels of X in 1 groups"));
  OpTest b("ConvTranspose", 22);
  b.Input(Tensor(DataType::kFloat, {1, 2, 4, 4})).Input(Tensor(DataType::kFloat, {2, 1, 3, 3}))
      .Input(Tensor(DataType::kFloat, {5}));
  EXPECT_TRUE(Refused(b.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "ConvTranspose: B has 5 values for 1 output channels"));
  // Strides, pads and output_padding whose output size passes INT64_MAX: refused, not wrapped.
  OpTest strides("ConvTranspose", 22);
  strides.Input(Tensor(DataType::kFloat, {1, 1, 3, 3})).Input(Tensor(DataType::kFloat, {1, 1, 3, 3}))
      .Attr("strides", std::vector<int64_t>{int64_t{1} << 62, int64_t{1} << 62});
  EXPECT_TRUE(Refused(strides.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "ConvTranspose: attributes 'strides', 'dilations' and 'output_padding' make spatial axis 0 of the output longer than any tensor"));
  OpTest pads("ConvTranspose", 22);
  pads.Input(Tensor(DataType::kFloat, {1, 1, 3})).Input(Tensor(DataType::kFloat, {1, 1, 3}))
      .Attr("pads", std::vector<int64_t>{INT64_MAX, INT64_MAX});
  EXPECT_TRUE(Refused(pads.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "ConvTranspose: attribute 'pads' (9223372036854775807, 9223372036854775807) leaves a negative output size on spatial axis 0"));
  // Pads cut the output to one pixel; col would still hold every tap of every input position.
  OpTest col("ConvTranspose", 22);
  col.Input(Tensor(DataType::kFloat, {1, 1, 1 << 16})).Input(Tensor(DataType::kFloat, {1, 1, 1 << 16}))
      .Attr("pads", std::vector<int64_t>{(1 << 16) - 1, (1 << 16) - 1});
  EXPECT_TRUE(Refused(col.Run(RegisterMathKernels), StatusCode::kResourceExhausted, "ConvTranspose: the unfolded product (col) of shape [1,65536,65536] would pass the limit of"));
}

}  // namespace
}  // namespace onnxflow
