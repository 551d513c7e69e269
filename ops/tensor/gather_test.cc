#include <gtest/gtest.h>

#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

template <typename T>
class GatherTyped : public ::testing::Test {};
TYPED_TEST_SUITE(GatherTyped, AllTypes);

TYPED_TEST(GatherTyped, EveryTypeOnAxisOneWithNegativeIndex) {
  const Tensor x = Iota<TypeParam>({2, 3, 2});
  OpTest test("Gather", 13);
  test.Input(x).Input(I64({2}, {-1, 0})).Attr("axis", int64_t{1});
  const Tensor y = Out(test);
  ASSERT_EQ(y.shape(), (Shape{2, 2, 2}));
  Tensor expected(x.dtype(), {2, 2, 2});
  const int64_t picks[2] = {2, 0};
  for (int64_t n = 0; n < 2; ++n)
    for (int64_t j = 0; j < 2; ++j)
      for (int64_t k = 0; k < 2; ++k)
        expected.mutable_data<TypeParam>()[(n * 2 + j) * 2 + k] = x.data<TypeParam>()[(n * 3 + picks[j]) * 2 + k];
  EXPECT_TRUE(Same(expected, y));
}

TEST(Gather, ScalarAndMatrixIndicesInt32) {
  const Tensor x = F32({3, 2}, {1, 2, 3, 4, 5, 6});
  OpTest scalar("Gather", 13);
  scalar.Input(x).Input(Tensor::Scalar<int32_t>(1));
  EXPECT_TRUE(Same(F32({2}, {3, 4}), Out(scalar)));

  OpTest matrix("Gather", 13);
  matrix.Input(x).Input(Tensor::FromVector<int32_t>({2, 2}, {0, 2, 1, 1})).Attr("axis", int64_t{-2});
  EXPECT_TRUE(Same(F32({2, 2, 2}, {1, 2, 5, 6, 3, 4, 3, 4}), Out(matrix)));

  OpTest empty("Gather", 13);
  empty.Input(x).Input(I64({0}, {}));
  EXPECT_EQ(Out(empty).shape(), (Shape{0, 2}));
}

TEST(Gather, OutOfRangeIndicesFail) {
  const Tensor x = F32({3, 2}, {1, 2, 3, 4, 5, 6});
  for (int64_t bad : {int64_t{3}, int64_t{-4}, INT64_MAX, INT64_MIN}) {
    OpTest test("Gather", 13);
    test.Input(x).Input(I64({2}, {0, bad}));
    const auto r = RunOp(test);
    EXPECT_EQ(r.status().code(), StatusCode::kOutOfRange) << bad;
  }
  OpTest float_indices("Gather", 13);
  float_indices.Input(x).Input(F32({1}, {0}));
  EXPECT_TRUE(Refused(RunOp(float_indices), StatusCode::kInvalidArgument, "input 'indices' must be int32 or int64, got float32"));
}

TEST(Gather, LargeInParallel) {
  const Tensor x = Iota<float>({1000, 300});
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < 900; ++i) idx.push_back((i * 37) % 1000);
  OpTest test("Gather", 13);
  test.Input(x).Input(I64(idx)).Threads(2);
  const Tensor y = Out(test);
  ASSERT_EQ(y.shape(), (Shape{900, 300}));
  for (int64_t i = 0; i < 900; i += 101) EXPECT_EQ(y.data<float>()[i * 300 + 7], x.data<float>()[idx[i] * 300 + 7]);
}

TEST(GatherElements, BothAxesNegativeIndicesAndErrors) {
  const Tensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  OpTest axis1("GatherElements", 13);
  axis1.Input(x).Input(I64({2, 2}, {0, -1, 1, 0})).Attr("axis", int64_t{1});
  EXPECT_TRUE(Same(F32({2, 2}, {1, 3, 5, 4}), Out(axis1)));

  OpTest axis0("GatherElements", 13);
  axis0.Input(x).Input(I64({1, 3}, {1, 0, -1})).Attr("axis", int64_t{0});
  EXPECT_TRUE(Same(F32({1, 3}, {4, 2, 6}), Out(axis0)));

  OpTest range("GatherElements", 13);
  range.Input(x).Input(I64({1, 1}, {3})).Attr("axis", int64_t{1});
  EXPECT_EQ(RunOp(range).status().code(), StatusCode::kOutOfRange);

  OpTest rank("GatherElements", 13);
  rank.Input(x).Input(I64({1}, {0}));
  EXPECT_TRUE(Refused(RunOp(rank), StatusCode::kInvalidArgument, "input 'indices' [1] must have the rank of data [2,3]"));

  OpTest too_big("GatherElements", 13);
  too_big.Input(x).Input(I64({3, 1}, {0, 0, 0})).Attr("axis", int64_t{1});
  EXPECT_TRUE(Refused(RunOp(too_big), StatusCode::kInvalidArgument, "input 'indices' [3,1] is larger than data [2,3] on axis 0"));
}

TEST(GatherND, BlocksElementsAndBatchDims) {
  const Tensor x = Iota<int32_t>({2, 2, 2});  // values 0..7
  OpTest rows("GatherND", 13);
  rows.Input(x).Input(I64({2, 1}, {1, 0}));
  EXPECT_TRUE(Same(Tensor::FromVector<int32_t>({2, 2, 2}, {4, 5, 6, 7, 0, 1, 2, 3}), Out(rows)));

  OpTest elements("GatherND", 13);
  elements.Input(x).Input(I64({2, 3}, {0, 1, 1, 1, 0, -2}));
  EXPECT_TRUE(Same(Tensor::FromVector<int32_t>({2}, {3, 4}), Out(elements)));

  OpTest batch("GatherND", 13);
  batch.Input(x).Input(I64({2, 1}, {1, 0})).Attr("batch_dims", int64_t{1});
  EXPECT_TRUE(Same(Tensor::FromVector<int32_t>({2, 2}, {2, 3, 4, 5}), Out(batch)));

  OpTest range("GatherND", 13);
  range.Input(x).Input(I64({1, 2}, {0, 2}));
  EXPECT_EQ(RunOp(range).status().code(), StatusCode::kOutOfRange);

  OpTest too_long("GatherND", 13);
  too_long.Input(x).Input(I64({1, 4}, {0, 0, 0, 0}));
  EXPECT_TRUE(Refused(RunOp(too_long), StatusCode::kInvalidArgument, "indices' last dim 4 exceeds data rank - batch_dims = 3"));
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
