// DynamicTimeWarping: hand-traced paths, ONNX Runtime's tie rule (the traces follow its kernel's
// comparisons step by step), empty inputs and the refusals.
#include <gtest/gtest.h>

#include <limits>

#include "ops/framework/domains.h"
#include "ops/framework/testing.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

Result<std::vector<Value>> Dtw(Tensor x) {
  OpTest t("DynamicTimeWarping", 1, kMsDomain);
  t.Input(std::move(x));
  return t.Run(RegisterMsMiscKernels);
}

TEST(DynamicTimeWarping, DiagonalOfAZeroDiagonal) {
  // Costs 0 on the diagonal, 1 elsewhere: the diagonal is strictly cheapest at every step.
  auto out = Dtw(Tensor::FromVector<float>({3, 3}, {0, 1, 1, 1, 0, 1, 1, 1, 0}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 3}, {0, 1, 2, 0, 1, 2}), (*out)[0].tensor()));
}

TEST(DynamicTimeWarping, HandTracedRectangle) {
  // input [2, 3] = [[1, 5, 1], [9, 1, 1]]; D (row 0 and column 0 infinite, D[0][0] = 0):
  // D[1][1] = 1, D[2][1] = 1 + 9 = 10 (up), D[1][2] = 1 + 5 = 6 (left), D[2][2] = min(1, 6, 10) + 1 = 2
  // (diagonal), D[1][3] = 6 + 1 = 7 (left), D[2][3] = min(diagonal 6, up 7, left 2) + 1 = 3 (left).
  // Back: (1, 2) left -> (1, 1) diagonal -> (0, 0).
  auto out = Dtw(Tensor::FromVector<float>({1, 2, 3}, {1, 5, 1, 9, 1, 1}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 3}, {0, 1, 1, 0, 1, 2}), (*out)[0].tensor()));
}

TEST(DynamicTimeWarping, TiesGoLeftEvenWhenLeftIsDearer) {
  // [[0, 0], [9, 0]]: D[1][1] = 0, D[1][2] = 0 (left), D[2][1] = 9 (up). At (2, 2) the diagonal
  // (0) ties up (0), so neither is strictly smallest and ONNX Runtime's rule takes left (9):
  // (1, 1) <- (1, 0) <- (0, 0), not the diagonal.
  auto out = Dtw(Tensor::FromVector<float>({2, 2}, {0, 0, 9, 0}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 3}, {0, 1, 1, 0, 0, 1}), (*out)[0].tensor()));
}

TEST(DynamicTimeWarping, NaNsGoLeft) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto out = Dtw(Tensor::FromVector<float>({2, 2}, {nan, nan, nan, nan}));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  // Every step is left: from (1, 1) to (1, 0), then out at column 0.
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 2}, {1, 1, 0, 1}), (*out)[0].tensor()));
}

TEST(DynamicTimeWarping, EmptyMatrixGivesEmptyPath) {
  for (Shape shape : {Shape{0, 4}, Shape{3, 0}, Shape{1, 0, 0}}) {
    auto out = Dtw(Tensor::FromVector<float>(shape, {}));
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_EQ((*out)[0].tensor().shape(), (Shape{2, 0}));
    EXPECT_EQ((*out)[0].tensor().dtype(), DataType::kInt32);
  }
}

TEST(DynamicTimeWarping, RefusesOtherRanksAndTypes) {
  EXPECT_TRUE(Refused(Dtw(Tensor::FromVector<float>({3}, {1, 2, 3})), StatusCode::kInvalidArgument, "input 'input'"));
  EXPECT_TRUE(
      Refused(Dtw(Tensor::FromVector<float>({2, 1, 1}, {1, 2})), StatusCode::kInvalidArgument, "[1, rows, cols]"));
  EXPECT_TRUE(
      Refused(Dtw(Tensor::FromVector<float>({1, 1, 1, 1}, {1})), StatusCode::kInvalidArgument, "input 'input'"));
  EXPECT_TRUE(Refused(Dtw(Tensor::FromVector<double>({1, 1}, {1})), StatusCode::kInvalidArgument, "must be float"));
  EXPECT_TRUE(Refused(Dtw(Tensor::FromVector<int32_t>({1, 1}, {1})), StatusCode::kInvalidArgument, "must be float"));
  OpTest two("DynamicTimeWarping", 1, kMsDomain);
  two.Input(Tensor::FromVector<float>({1, 1}, {1})).Input(Tensor::FromVector<float>({1, 1}, {1}));
  EXPECT_TRUE(Refused(two.Run(RegisterMsMiscKernels), StatusCode::kInvalidArgument, "takes 1 input"));
}

}  // namespace
}  // namespace onnxflow
