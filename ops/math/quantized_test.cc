// MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv on hand-computed values, per-row and
// per-column zero points, saturation and rounding, and error paths.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/math/conv_geometry.h"

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

TEST(QuantizedTest, MatMulIntegerZeroPoints) {
  // (A - [1; 2]) x (B - [0, 1]) with A = [[3, 4], [5, 6]], B = [[1, 2], [3, 4]]
  // A' = [[2, 3], [3, 4]], B' = [[1, 1], [3, 3]] -> [[11, 11], [15, 15]]
  OpTest t("MatMulInteger", 10);
  t.Input(Tensor::FromVector<uint8_t>({2, 2}, {3, 4, 5, 6})).Input(Tensor::FromVector<uint8_t>({2, 2}, {1, 2, 3, 4}))
      .Input(Tensor::FromVector<uint8_t>({2}, {1, 2})).Input(Tensor::FromVector<uint8_t>({2}, {0, 1}));
  auto out = t.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 2}, {11, 11, 15, 15}), (*out)[0].tensor()));
  OpTest s("MatMulInteger", 10);  // int8, no zero points, batch broadcast
  s.Input(Tensor::FromVector<int8_t>({2, 1, 2}, {-1, 2, 3, -4})).Input(Tensor::FromVector<int8_t>({2, 1}, {5, 6}));
  out = s.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 1, 1}, {7, -9}), (*out)[0].tensor()));
  OpTest bad("MatMulInteger", 10);
  bad.Input(Tensor(DataType::kUint8, {2, 2})).Input(Tensor(DataType::kUint8, {2, 2})).Input(Tensor(DataType::kUint8, {3}));
  EXPECT_TRUE(Refused(bad.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "a_zero_point has 3 values; expected 1 or 2"));
}

// Batched operands with a zero point per matrix: A [2, 2, 3] with [2, 2, 1], B [2, 3, 2] with
// [2, 1, 2] (the spec's per-row / per-column forms for N-D inputs), against loops.
TEST(QuantizedTest, MatMulIntegerZeroPointsPerBatchMatrix) {
  const std::vector<uint8_t> a = {3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}, b = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  const std::vector<uint8_t> za = {1, 2, 3, 4}, zb = {0, 1, 2, 3};
  std::vector<int32_t> want(8);
  for (int d = 0; d < 2; ++d)
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 2; ++j) {
        int32_t acc = 0;
        for (int k = 0; k < 3; ++k) acc += (a[(d * 2 + i) * 3 + k] - za[d * 2 + i]) * (b[(d * 3 + k) * 2 + j] - zb[d * 2 + j]);
        want[(d * 2 + i) * 2 + j] = acc;
      }
  OpTest t("MatMulInteger", 10);
  t.Input(Tensor::FromVector<uint8_t>({2, 2, 3}, a)).Input(Tensor::FromVector<uint8_t>({2, 3, 2}, b))
      .Input(Tensor::FromVector<uint8_t>({2, 2, 1}, za)).Input(Tensor::FromVector<uint8_t>({2, 1, 2}, zb));
  auto out = t.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 2, 2}, want), (*out)[0].tensor()));
}

TEST(QuantizedTest, QLinearMatMulRoundsAndSaturates) {
  // acc = [[10, 300]] ; scale 0.5 * 1 / 1 -> 5, 150 (+ zero 100 -> 105, 250) ; int8 saturates to 127.
  auto run = [](DataType yt) {
    OpTest t("QLinearMatMul", 21);
    t.Input(Tensor::FromVector<uint8_t>({1, 1}, {10})).Input(Tensor::FromVector<float>({}, {0.5f}))
        .Input(Tensor::FromVector<uint8_t>({}, {0})).Input(Tensor::FromVector<uint8_t>({1, 2}, {1, 30}))
        .Input(Tensor::FromVector<float>({}, {1.0f})).Input(Tensor::FromVector<uint8_t>({}, {0}))
        .Input(Tensor::FromVector<float>({}, {1.0f}));
    if (yt == DataType::kUint8) t.Input(Tensor::FromVector<uint8_t>({}, {100}));
    else t.Input(Tensor::FromVector<int8_t>({}, {100}));
    return t.Run(RegisterMathKernels);
  };
  auto out = run(DataType::kUint8);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({1, 2}, {105, 250}), (*out)[0].tensor()));
  out = run(DataType::kInt8);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int8_t>({1, 2}, {105, 127}), (*out)[0].tensor()));
}

// com.microsoft QGemm against a double reference: transposed operands, a constant (packed) B, one
// b_scale or one per column, C absent, per column, per row or full, float and 8-bit outputs.
TEST(QuantizedTest, QGemmMatchesItsDefinition) {
  const int64_t m = 5, k = 7, n = 6;
  std::mt19937 rng(7);
  std::vector<uint8_t> a(m * k);
  std::vector<int8_t> b(k * n);
  std::vector<int32_t> c_full(m * n);
  for (auto& v : a) v = static_cast<uint8_t>(rng() % 256);
  for (auto& v : b) v = static_cast<int8_t>(static_cast<int>(rng() % 256) - 128);
  for (auto& v : c_full) v = static_cast<int>(rng() % 2001) - 1000;
  const std::vector<float> b_scales = {0.01f, 0.02f, 0.015f, 0.03f, 0.005f, 0.025f};
  const std::vector<int8_t> b_zeros = {0, 3, -2, 1, 0, -5};
  const float a_scale = 0.05f, alpha = 0.5f, y_scale = 0.4f;
  const uint8_t a_zero = 120;
  for (int trans_a : {0, 1}) {
    for (int trans_b : {0, 1}) {
      for (int per_column : {0, 1}) {
        for (int c_form : {0, 1, 2, 3}) {  // none, [n], [m, 1], [m, n]
          for (int out : {0, 1, 2}) {      // float, uint8, int8
            std::vector<uint8_t> at(a.size());
            std::vector<int8_t> bt(b.size());
            for (int64_t i = 0; i < m; ++i)
              for (int64_t q = 0; q < k; ++q) at[trans_a ? q * m + i : i * k + q] = a[i * k + q];
            for (int64_t q = 0; q < k; ++q)
              for (int64_t j = 0; j < n; ++j) bt[trans_b ? j * k + q : q * n + j] = b[q * n + j];
            OpTest t("QGemm", 1, "com.microsoft");
            t.Input(Tensor::FromVector<uint8_t>(trans_a ? Shape{k, m} : Shape{m, k}, at))
                .Input(Tensor::FromVector<float>({}, {a_scale}))
                .Input(Tensor::FromVector<uint8_t>({}, {a_zero}))
                .Input(Tensor::FromVector<int8_t>(trans_b ? Shape{n, k} : Shape{k, n}, bt))
                .ConstantInput(3);
            if (per_column) {
              t.Input(Tensor::FromVector<float>({n}, b_scales)).Input(Tensor::FromVector<int8_t>({n}, b_zeros));
            } else {
              t.Input(Tensor::FromVector<float>({}, {b_scales[0]})).Input(Tensor::FromVector<int8_t>({}, {b_zeros[1]}));
            }
            std::vector<int32_t> c_used(m * n, 0);
            if (c_form == 0) {
              t.AbsentInput();
            } else {
              std::vector<int32_t> c;
              Shape shape = c_form == 1 ? Shape{n} : c_form == 2 ? Shape{m, 1} : Shape{m, n};
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  const int64_t at_c = c_form == 1 ? j : c_form == 2 ? i : i * n + j;
                  c_used[i * n + j] = c_full[at_c];
                }
              c.assign(c_full.begin(), c_full.begin() + ElementCount(shape));
              t.Input(Tensor::FromVector<int32_t>(shape, c));
            }
            if (out == 1) t.Input(Tensor::FromVector<float>({}, {y_scale})).Input(Tensor::FromVector<uint8_t>({}, {10}));
            if (out == 2) t.Input(Tensor::FromVector<float>({}, {y_scale})).Input(Tensor::FromVector<int8_t>({}, {-3}));
            t.Attr("alpha", alpha).Attr("transA", int64_t{trans_a}).Attr("transB", int64_t{trans_b});
            auto y = t.Run(RegisterMathKernels);
            ASSERT_TRUE(y.ok()) << y.status().ToString();
            const Tensor& yt = (*y)[0].tensor();
            ASSERT_EQ(yt.shape(), (Shape{m, n}));
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < n; ++j) {
                int64_t acc = c_used[i * n + j];
                const int zb = per_column ? b_zeros[j] : b_zeros[1];
                for (int64_t q = 0; q < k; ++q) acc += (int64_t{a[i * k + q]} - a_zero) * (b[q * n + j] - zb);
                const double v = static_cast<double>(acc) * alpha * a_scale * (per_column ? b_scales[j] : b_scales[0]);
                const std::string where = std::to_string(trans_a) + std::to_string(trans_b) +
                                          std::to_string(per_column) + std::to_string(c_form) +
                                          std::to_string(out) + " at " + std::to_string(i * n + j);
                if (out == 0) {
                  ASSERT_EQ(yt.dtype(), DataType::kFloat);
                  EXPECT_NEAR(yt.data<float>()[i * n + j], v, 1e-5 * std::fabs(v) + 1e-6) << where;
                } else {
                  const double q = std::nearbyint(v / y_scale) + (out == 1 ? 10 : -3);
                  const double sat = out == 1 ? std::min(255.0, std::max(0.0, q)) : std::min(127.0, std::max(-128.0, q));
                  const double got = out == 1 ? double{yt.data<uint8_t>()[i * n + j]} : double{yt.data<int8_t>()[i * n + j]};
                  EXPECT_NEAR(got, sat, 1.0) << where;  // within one unit: float rounding at .5
                }
              }
            }
          }
        }
      }
    }
  }
  OpTest bad("QGemm", 1, "com.microsoft");
  bad.Input(Tensor(DataType::kUint8, {2, 3})).Input(Tensor::FromVector<float>({}, {1.0f}))
      .Input(Tensor::FromVector<uint8_t>({}, {0})).Input(Tensor(DataType::kInt8, {3, 4}))
      .Input(Tensor::FromVector<float>({3}, {1, 1, 1})).Input(Tensor::FromVector<int8_t>({}, {0}));
  EXPECT_TRUE(Refused(bad.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "b_scale has 3 values; expected 1 or 4"));
}

// Each of QGemm's refusals names what is wrong.
TEST(QuantizedTest, QGemmRefusesWithAMessage) {
  struct Case {
    DataType a, b;
    Shape a_shape, b_shape;
    Tensor a_scale;
    Tensor c;  // undefined: no C
    const char* message;
  };
  const std::vector<Case> cases = {
      {DataType::kFloat, DataType::kInt8, {2, 3}, {3, 4}, Tensor::Scalar<float>(1), Tensor(), "QGemm: A and B must be int8 or uint8"},
      {DataType::kUint8, DataType::kInt8, {2, 3, 1}, {3, 4}, Tensor::Scalar<float>(1), Tensor(), "QGemm: A [2,3,1] and B [3,4] must be matrices"},
      {DataType::kUint8, DataType::kInt8, {2, 3}, {5, 4}, Tensor::Scalar<float>(1), Tensor(), "QGemm: inner dimensions differ, A [2,3] and B [5,4]"},
      {DataType::kUint8, DataType::kInt8, {2, 3}, {3, 4}, Tensor::FromVector<float>({2}, {1, 1}), Tensor(), "QGemm: a_scale must be one float and b_scale float"},
      {DataType::kUint8, DataType::kInt8, {2, 3}, {3, 4}, Tensor::Scalar<float>(1), Tensor(DataType::kFloat, {4}), "QGemm: C must be int32"},
      {DataType::kUint8, DataType::kInt8, {2, 3}, {3, 4}, Tensor::Scalar<float>(1), Tensor(DataType::kInt32, {3}), "QGemm: C [3] does not broadcast to [2,4]"},
  };
  for (const Case& c : cases) {
    OpTest t("QGemm", 1, "com.microsoft");
    t.Input(Tensor(c.a, c.a_shape)).Input(c.a_scale);
    if (c.a == DataType::kUint8) t.Input(Tensor::Scalar<uint8_t>(0)); else t.AbsentInput();
    t.Input(Tensor(c.b, c.b_shape)).Input(Tensor::Scalar<float>(1)).Input(Tensor::Scalar<int8_t>(0));
    if (c.c.dtype() != DataType::kUndefined) t.Input(c.c);
    EXPECT_TRUE(Refused(t.Run(RegisterMathKernels), StatusCode::kInvalidArgument, c.message)) << c.message;
  }
}

TEST(QuantizedTest, ConvIntegerAndQLinearConv) {
  // 1x1x2x2 input minus zero point 1, 1x1x2x2 kernel: a single output.
  OpTest c("ConvInteger", 10);
  c.Input(Tensor::FromVector<uint8_t>({1, 1, 2, 2}, {2, 3, 4, 5})).Input(Tensor::FromVector<uint8_t>({1, 1, 2, 2}, {1, 1, 1, 2}))
      .Input(Tensor::FromVector<uint8_t>({}, {1}));
  auto out = c.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({1, 1, 1, 1}, {1 + 2 + 3 + 8}), (*out)[0].tensor()));
  // Padding contributes zero after the zero point is removed.
  OpTest p("ConvInteger", 10);
  p.Input(Tensor::FromVector<uint8_t>({1, 1, 1, 1}, {7})).Input(Tensor::FromVector<uint8_t>({1, 1, 1, 2}, {1, 1}))
      .Input(Tensor::FromVector<uint8_t>({}, {5})).Attr("pads", std::vector<int64_t>{0, 1, 0, 0});
  out = p.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({1, 1, 1, 1}, {2}), (*out)[0].tensor()));
  // QLinearConv: acc 14 + bias 6 = 20, * (0.5 * 0.25 / 0.5) = 5, + zero 3 -> 8.
  OpTest q("QLinearConv", 10);
  q.Input(Tensor::FromVector<int8_t>({1, 1, 2, 2}, {2, 3, 4, 5})).Input(Tensor::FromVector<float>({}, {0.5f}))
      .Input(Tensor::FromVector<int8_t>({}, {1})).Input(Tensor::FromVector<int8_t>({1, 1, 2, 2}, {1, 1, 1, 2}))
      .Input(Tensor::FromVector<float>({1}, {0.25f})).Input(Tensor::FromVector<int8_t>({1}, {0}))
      .Input(Tensor::FromVector<float>({}, {0.5f})).Input(Tensor::FromVector<int8_t>({}, {3}))
      .Input(Tensor::FromVector<int32_t>({1}, {6}));
  out = q.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int8_t>({1, 1, 1, 1}, {8}), (*out)[0].tensor()));
  OpTest bad("ConvInteger", 10);
  bad.Input(Tensor(DataType::kFloat, {1, 1, 2, 2})).Input(Tensor(DataType::kUint8, {1, 1, 2, 2}));
  EXPECT_TRUE(Refused(bad.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "x and w must be int8 or uint8"));
}

// A convolution big enough for the GEMM path (groups, stride 2, asymmetric pads, per-channel weight
// zero points, int8 weights against uint8 input) against DirectConv, and the same through the
// pointwise path.
TEST(QuantizedTest, ConvIntegerMatchesDirectConvOnTheGemmPath) {
  std::mt19937 rng(3);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const bool pointwise : {false, true}) {
    const int64_t n = 2, c = 6, h = 11, w = 13, m = 10, group = 2, k = pointwise ? 1 : 3;
    std::vector<uint8_t> x(n * c * h * w);
    std::vector<int8_t> wt(m * (c / group) * k * k), wz(m);
    for (auto& v : x) v = static_cast<uint8_t>(byte(rng));
    for (auto& v : wt) v = static_cast<int8_t>(byte(rng) - 128);
    for (auto& v : wz) v = static_cast<int8_t>(byte(rng) % 9 - 4);
    const uint8_t xz = 117;
    OpTest t("ConvInteger", 10);
    t.Input(Tensor::FromVector<uint8_t>({n, c, h, w}, x)).Input(Tensor::FromVector<int8_t>({m, c / group, k, k}, wt))
        .Input(Tensor::FromVector<uint8_t>({}, {xz})).Input(Tensor::FromVector<int8_t>({m}, wz))
        .Attr("group", group);
    ConvAttributes attrs;
    attrs.group = group;
    if (!pointwise) {
      t.Attr("strides", std::vector<int64_t>{2, 2}).Attr("pads", std::vector<int64_t>{1, 0, 2, 1});
      attrs.strides = {2, 2};
      attrs.pads = {1, 0, 2, 1};
    }
    auto out = t.Run(RegisterMathKernels);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    auto g = ComputeConvGeometry(attrs, {n, c, h, w}, {m, c / group, k, k});
    ASSERT_TRUE(g.ok());
    std::vector<int32_t> xs(x.begin(), x.end()), ws(wt.begin(), wt.end()), wzs(wz.begin(), wz.end());
    std::vector<int32_t> want(ElementCount(g->output_shape()));
    DirectConv<int32_t, int32_t, int32_t>(*g, xs.data(), ws.data(), nullptr, xz, wzs.data(), want.data());
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>(g->output_shape(), want), (*out)[0].tensor()))
        << (pointwise ? "pointwise" : "3x3 stride 2");
  }
}

// Depthwise ConvInteger, which runs on the float depthwise kernel (integer_depthwise.h): every
// operand type, per-channel and per-tensor weight zero points, strides, dilations, asymmetric pads,
// a channel multiplier, 1-D, two threads; then the extremes, where a sum of 256 products of 255 *
// -255 must still come out exact, and 272 taps, past what float holds exactly (the GEMM path).
TEST(QuantizedTest, DepthwiseConvIntegerIsExact) {
  struct Case {
    const char* name;
    bool x_signed, w_signed, per_channel;
    std::vector<int64_t> x_shape, kernel, strides, pads, dilations;
    int64_t mult = 1;
    int threads = 1;
    bool extreme = false;
  };
  const std::vector<Case> cases = {
      {"u8 x s8, 3x3 pad 1", false, true, true, {2, 5, 9, 11}, {3, 3}, {1, 1}, {1, 1, 1, 1}, {1, 1}},
      {"s8 x u8, 5x5 stride 2 asymmetric", true, false, false, {1, 7, 12, 10}, {5, 5}, {2, 2}, {2, 1, 0, 2}, {1, 1}},
      {"u8 x u8, 3x3 dilation 2, x2 channels", false, false, true, {1, 3, 10, 10}, {3, 3}, {1, 1}, {2, 2, 2, 2},
       {2, 2}, 2},
      {"s8 x s8, 1-D 7 taps stride 2, 2 threads", true, true, true, {1, 40, 31}, {7}, {2}, {3, 3}, {1}, 1, 2},
      {"extremes, 16x16 taps", false, false, false, {1, 2, 16, 16}, {16, 16}, {1, 1}, {0, 0, 0, 0}, {1, 1}, 1, 1,
       true},
      {"extremes, 17x16 taps: the GEMM", false, false, false, {1, 2, 17, 16}, {17, 16}, {1, 1}, {0, 0, 0, 0},
       {1, 1}, 1, 1, true},
  };
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> byte(0, 255);
  for (const Case& tc : cases) {
    const int64_t c = tc.x_shape[1], m = c * tc.mult;
    Shape w_shape = {m, 1};
    w_shape.insert(w_shape.end(), tc.kernel.begin(), tc.kernel.end());
    std::vector<int32_t> x(ElementCount(tc.x_shape)), w(ElementCount(w_shape)), wz(tc.per_channel ? m : 1);
    const auto draw = [&](bool is_signed) { return byte(rng) - (is_signed ? 128 : 0); };
    for (auto& v : x) v = tc.extreme ? 255 : draw(tc.x_signed);
    for (auto& v : w) v = tc.extreme ? 0 : draw(tc.w_signed);
    for (auto& v : wz) v = tc.extreme ? 255 : draw(tc.w_signed);
    const int32_t xz = tc.extreme ? 0 : draw(tc.x_signed);
    const auto bytes = [](bool is_signed, const Shape& shape, const std::vector<int32_t>& v) {
      return is_signed ? Tensor::FromVector<int8_t>(shape, std::vector<int8_t>(v.begin(), v.end()))
                       : Tensor::FromVector<uint8_t>(shape, std::vector<uint8_t>(v.begin(), v.end()));
    };
    OpTest t("ConvInteger", 10);
    t.Input(bytes(tc.x_signed, tc.x_shape, x)).Input(bytes(tc.w_signed, w_shape, w))
        .Input(bytes(tc.x_signed, {}, {xz})).Input(bytes(tc.w_signed, tc.per_channel ? Shape{m} : Shape{}, wz))
        .ConstantInput(1).Attr("group", c).Attr("strides", tc.strides).Attr("pads", tc.pads)
        .Attr("dilations", tc.dilations).Threads(tc.threads);
    auto out = t.Run(RegisterMathKernels);
    ASSERT_TRUE(out.ok()) << tc.name << ": " << out.status().ToString();
    ConvAttributes attrs;
    attrs.group = c;
    attrs.strides = tc.strides;
    attrs.pads = tc.pads;
    attrs.dilations = tc.dilations;
    auto g = ComputeConvGeometry(attrs, tc.x_shape, w_shape);
    ASSERT_TRUE(g.ok()) << tc.name;
    std::vector<int32_t> wzs(m);
    for (int64_t i = 0; i < m; ++i) wzs[i] = wz[tc.per_channel ? i : 0];
    std::vector<int32_t> want(ElementCount(g->output_shape()));
    DirectConv<int32_t, int32_t, int32_t>(*g, x.data(), w.data(), nullptr, xz, wzs.data(), want.data());
    if (tc.extreme) EXPECT_EQ(want[0], -255 * 255 * ElementCount(tc.kernel)) << tc.name;
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>(g->output_shape(), want), (*out)[0].tensor())) << tc.name;
  }
}

TEST(QuantizedTest, MatMulIntegerToFloatScalesAndAddsBias) {
  // (A - 2) x (B - [0, 1]) = [[1*1 + 2*3, 1*1 + 2*3]] = [[7, 7]] -> * 0.5 * [1, 2] + [10, 20].
  OpTest t("MatMulIntegerToFloat", 1, "com.microsoft");
  t.Input(Tensor::FromVector<uint8_t>({1, 2}, {3, 4})).Input(Tensor::FromVector<int8_t>({2, 2}, {1, 2, 3, 4}))
      .Input(Tensor::FromVector<float>({}, {0.5f})).Input(Tensor::FromVector<float>({2}, {1.0f, 2.0f}))
      .Input(Tensor::FromVector<uint8_t>({}, {2})).Input(Tensor::FromVector<int8_t>({2}, {0, 1}))
      .Input(Tensor::FromVector<float>({2}, {10.0f, 20.0f}));
  auto out = t.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 2}, {13.5f, 27.0f}), (*out)[0].tensor()));
  OpTest bad("MatMulIntegerToFloat", 1, "com.microsoft");
  bad.Input(Tensor::FromVector<uint8_t>({1, 2}, {3, 4})).Input(Tensor::FromVector<int8_t>({2, 2}, {1, 2, 3, 4}))
      .Input(Tensor::FromVector<float>({}, {0.5f})).Input(Tensor::FromVector<float>({3}, {1.0f, 2.0f, 3.0f}));
  auto refused = bad.Run(RegisterMathKernels);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("b_scale has 3 values; expected 1 or 2"), std::string::npos)
      << refused.status().ToString();
}

// float16 scales and bias (what ONNX Runtime writes for a float16 model): Y in float16.
TEST(QuantizedTest, MatMulIntegerToFloatInHalf) {
  auto half = [](Shape shape, const std::vector<float>& v) {
    std::vector<Float16> h;
    for (float x : v) h.push_back(Float16{FloatToHalf(x)});
    return Tensor::FromVector<Float16>(std::move(shape), h);
  };
  OpTest t("MatMulIntegerToFloat", 1, "com.microsoft");
  t.Input(Tensor::FromVector<uint8_t>({1, 2}, {3, 4})).Input(Tensor::FromVector<int8_t>({2, 2}, {1, 2, 3, 4}))
      .Input(half({}, {0.5f})).Input(half({2}, {1.0f, 2.0f}))
      .Input(Tensor::FromVector<uint8_t>({}, {2})).Input(Tensor::FromVector<int8_t>({2}, {0, 1}))
      .Input(half({2}, {10.0f, 20.0f}));
  auto out = t.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(half({1, 2}, {13.5f, 27.0f}), (*out)[0].tensor()));
  OpTest mixed("MatMulIntegerToFloat", 1, "com.microsoft");
  mixed.Input(Tensor::FromVector<uint8_t>({1, 2}, {3, 4})).Input(Tensor::FromVector<int8_t>({2, 2}, {1, 2, 3, 4}))
      .Input(half({}, {0.5f})).Input(Tensor::FromVector<float>({2}, {1.0f, 2.0f}));
  auto refused = mixed.Run(RegisterMathKernels);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().ToString().find("must both be float, float16 or bfloat16, got float16 and float"),
            std::string::npos)
      << refused.status().ToString();
}

TEST(QuantizedTest, DynamicQuantizeMatMulQuantizesAOnTheFly) {
  // A = [[-1, 0.6, 2]]: range [-1, 2], scale 3/255, zero point round(255/3) = 85; A_q = [0, 136, 255].
  // B = I (3x3, int8) scale 0.1 and bias [1, 2, 3]: y = (A_q - 85) * scale_a * 0.1 + bias.
  const float sa = 3.0f / 255.0f;
  OpTest t("DynamicQuantizeMatMul", 1, "com.microsoft");
  t.Input(Tensor::FromVector<float>({1, 3}, {-1.0f, 0.6f, 2.0f}))
      .Input(Tensor::FromVector<int8_t>({3, 3}, {1, 0, 0, 0, 1, 0, 0, 0, 1}))
      .Input(Tensor::FromVector<float>({}, {0.1f})).Input(Tensor::FromVector<int8_t>({}, {0}))
      .Input(Tensor::FromVector<float>({3}, {1.0f, 2.0f, 3.0f}));
  auto out = t.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float s = sa * 0.1f;
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({1, 3}, {static_cast<float>(0 - 85) * s + 1.0f,
                                                            static_cast<float>(136 - 85) * s + 2.0f,
                                                            static_cast<float>(255 - 85) * s + 3.0f}),
                           (*out)[0].tensor()));
}

}  // namespace
}  // namespace onnxflow
