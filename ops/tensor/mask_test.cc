#include <gtest/gtest.h>

#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

template <typename T>
Tensor ReferenceTrilu(const Tensor& x, int64_t k, bool upper) {
  Tensor y(x.dtype(), x.shape());
  const int64_t rows = x.dim(x.rank() - 2), cols = x.dim(x.rank() - 1);
  for (int64_t e = 0; e < x.size(); ++e) {
    const int64_t j = e % cols, i = (e / cols) % rows;
    if (upper ? j - i >= k : j - i <= k) y.mutable_data<T>()[e] = x.data<T>()[e];
  }
  return y;
}

template <typename T>
class TriluTyped : public ::testing::Test {};
TYPED_TEST_SUITE(TriluTyped, AllTypes);

TYPED_TEST(TriluTyped, EveryTypeBothTriangles) {
  const Tensor x = Iota<TypeParam>({2, 3, 4});
  for (int64_t k : {-5, -1, 0, 2, 9}) {
    for (int64_t upper : {0, 1}) {
      OpTest test("Trilu", 14);
      test.Input(x).Input(Tensor::Scalar<int64_t>(k)).Attr("upper", upper);
      EXPECT_TRUE(Same(ReferenceTrilu<TypeParam>(x, k, upper != 0), Out(test))) << "k " << k << " upper " << upper;
    }
  }
}

TEST(Trilu, DefaultKZeroSizeAndRank) {
  OpTest test("Trilu", 14);
  test.Input(F32({2, 2}, {1, 2, 3, 4}));
  EXPECT_TRUE(Same(F32({2, 2}, {1, 2, 0, 4}), Out(test)));
  OpTest empty("Trilu", 14);
  empty.Input(Iota<float>({0, 3}));
  EXPECT_EQ(Out(empty).shape(), (Shape{0, 3}));
  OpTest rank("Trilu", 14);
  rank.Input(Iota<float>({3}));
  EXPECT_TRUE(Refused(RunOp(rank), StatusCode::kInvalidArgument, "input must have rank >= 2, got [3]"));
}

TEST(OneHot, AxesNegativeAndOutOfRangeIndices) {
  const Tensor values = F32({2}, {-1, 5});
  OpTest last("OneHot", 11);
  last.Input(I64({3}, {0, -1, 7})).Input(Tensor::Scalar<float>(3)).Input(values);
  EXPECT_TRUE(Same(F32({3, 3}, {5, -1, -1, -1, -1, 5, -1, -1, -1}), Out(last)));

  OpTest first("OneHot", 11);
  first.Input(Tensor::FromVector<int32_t>({2}, {1, 2})).Input(Tensor::Scalar<int64_t>(3)).Input(values).Attr(
      "axis", int64_t{0});
  EXPECT_TRUE(Same(F32({3, 2}, {-1, -1, 5, -1, -1, 5}), Out(first)));

  OpTest strings("OneHot", 11);
  strings.Input(F32({1}, {1.7f})).Input(Tensor::Scalar<int32_t>(2)).Input(
      Tensor::FromVector<std::string>({2}, {"off", "on"}));
  EXPECT_TRUE(Same(Tensor::FromVector<std::string>({1, 2}, {"off", "on"}), Out(strings)));

  OpTest bad_depth("OneHot", 11);
  bad_depth.Input(I64({0})).Input(Tensor::Scalar<int64_t>(0)).Input(values);
  EXPECT_TRUE(Refused(RunOp(bad_depth), StatusCode::kInvalidArgument, "input 'depth' must be a positive count, got 0.000000"));

  OpTest bad_values("OneHot", 11);
  bad_values.Input(I64({0})).Input(Tensor::Scalar<int64_t>(2)).Input(F32({3}, {0, 1, 2}));
  EXPECT_TRUE(Refused(RunOp(bad_values), StatusCode::kInvalidArgument, "input 'values' must hold [off, on], got shape [3]"));
}

TEST(ReverseSequence, TimeMajorAndBatchMajor) {
  // [time 3, batch 2]: batch 0 reverses 3 steps, batch 1 reverses 2.
  OpTest time("ReverseSequence", 10);
  time.Input(F32({3, 2}, {0, 10, 1, 11, 2, 12})).Input(I64({3, 2}));
  EXPECT_TRUE(Same(F32({3, 2}, {2, 11, 1, 10, 0, 12}), Out(time)));

  OpTest batch("ReverseSequence", 10);
  batch.Input(Iota<std::string>({2, 3})).Input(I64({1, 3})).Attr("batch_axis", int64_t{0}).Attr("time_axis", int64_t{1});
  EXPECT_TRUE(Same(Tensor::FromVector<std::string>({2, 3}, {"s0", "s1", "s2", "s5", "s4", "s3"}), Out(batch)));

  OpTest bad_len("ReverseSequence", 10);
  bad_len.Input(Iota<float>({3, 2})).Input(I64({4, 1}));
  EXPECT_EQ(RunOp(bad_len).status().code(), StatusCode::kOutOfRange);

  OpTest bad_count("ReverseSequence", 10);
  bad_count.Input(Iota<float>({3, 2})).Input(I64({1}));
  EXPECT_TRUE(Refused(RunOp(bad_count), StatusCode::kInvalidArgument, "input 'sequence_lens' has 1 entries for batch 2"));
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
