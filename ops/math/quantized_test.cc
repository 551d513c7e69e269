// MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv on hand-computed values, per-row and
// per-column zero points, saturation and rounding, and error paths.
#include <cmath>
#include <random>
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
