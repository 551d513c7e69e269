// MatMulInteger, QLinearMatMul, ConvInteger and QLinearConv on hand-computed values, per-row and
// per-column zero points, saturation and rounding, and error paths.
#include <vector>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace onnxflow
