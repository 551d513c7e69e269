#include <gtest/gtest.h>

#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

TEST(NonZero, CoordinatesInRowMajorOrder) {
  OpTest test("NonZero", 13);
  test.Input(Tensor::FromVector<int32_t>({2, 3}, {0, 5, 0, 7, 0, 1}));
  EXPECT_TRUE(Same(I64({2, 3}, {0, 1, 1, 1, 0, 2}), Out(test)));

  OpTest strings("NonZero", 13);
  strings.Input(Tensor::FromVector<std::string>({3}, {"", "a", ""}));
  EXPECT_TRUE(Same(I64({1, 1}, {1}), Out(strings)));

  OpTest half("NonZero", 13);
  half.Input(Tensor::FromVector<Float16>({3}, {FromCompute<Float16>(-0.0f), FromCompute<Float16>(2),
                                               FromCompute<Float16>(0)}));
  EXPECT_TRUE(Same(I64({1, 1}, {1}), Out(half)));

  OpTest empty("NonZero", 13);
  empty.Input(Iota<float>({0, 4}));
  EXPECT_EQ(Out(empty).shape(), (Shape{2, 0}));
}

template <typename T>
class CompressTyped : public ::testing::Test {};
TYPED_TEST_SUITE(CompressTyped, AllTypes);

TYPED_TEST(CompressTyped, EveryTypeAlongNegativeAxis) {
  const Tensor x = Iota<TypeParam>({2, 3});
  OpTest test("Compress", 11);
  test.Input(x).Input(Tensor::FromVector<bool>({2}, {false, true})).Attr("axis", int64_t{-1});
  Tensor expected(x.dtype(), {2, 1});
  expected.mutable_data<TypeParam>()[0] = x.data<TypeParam>()[1];
  expected.mutable_data<TypeParam>()[1] = x.data<TypeParam>()[4];
  EXPECT_TRUE(Same(expected, Out(test)));
}

TEST(Compress, FlattenedWithoutAxisAndErrors) {
  OpTest flat("Compress", 11);
  flat.Input(F32({2, 2}, {1, 2, 3, 4})).Input(Tensor::FromVector<bool>({4}, {true, false, false, true}));
  EXPECT_TRUE(Same(F32({2}, {1, 4}), Out(flat)));

  OpTest too_long("Compress", 11);
  too_long.Input(F32({2}, {1, 2})).Input(Tensor::FromVector<bool>({3}, {false, false, true}));
  EXPECT_EQ(RunOp(too_long).status().code(), StatusCode::kOutOfRange);

  OpTest not_bool("Compress", 11);
  not_bool.Input(F32({2}, {1, 2})).Input(I64({1}));
  EXPECT_TRUE(Refused(RunOp(not_bool), StatusCode::kInvalidArgument, "input 'condition' must be bool"));
}

std::vector<Value> RunUnique(OpTest& test) {
  auto r = RunOp(test.Outputs(4));
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : std::vector<Value>(4);
}

TEST(Unique, SortedAndUnsortedWithoutAxis) {
  const Tensor x = F32({6}, {2, 1, 1, 3, 4, 3});
  OpTest sorted("Unique", 11);
  sorted.Input(x);
  auto s = RunUnique(sorted);
  EXPECT_TRUE(Same(F32({4}, {1, 2, 3, 4}), s[0].tensor()));
  EXPECT_TRUE(Same(I64({1, 0, 3, 4}), s[1].tensor()));
  EXPECT_TRUE(Same(I64({1, 0, 0, 2, 3, 2}), s[2].tensor()));
  EXPECT_TRUE(Same(I64({2, 1, 2, 1}), s[3].tensor()));

  OpTest unsorted("Unique", 11);
  unsorted.Input(x).Attr("sorted", int64_t{0});
  auto u = RunUnique(unsorted);
  EXPECT_TRUE(Same(F32({4}, {2, 1, 3, 4}), u[0].tensor()));
  EXPECT_TRUE(Same(I64({0, 1, 3, 4}), u[1].tensor()));
  EXPECT_TRUE(Same(I64({0, 1, 1, 2, 3, 2}), u[2].tensor()));
  EXPECT_TRUE(Same(I64({1, 2, 2, 1}), u[3].tensor()));
}

TEST(Unique, AlongNegativeAxisAndStrings) {
  // Columns of [[1,0,1],[2,5,2]]: column 0 == column 2.
  OpTest cols("Unique", 11);
  cols.Input(Tensor::FromVector<int32_t>({2, 3}, {1, 0, 1, 2, 5, 2})).Attr("axis", int64_t{-1});
  auto c = RunUnique(cols);
  EXPECT_TRUE(Same(Tensor::FromVector<int32_t>({2, 2}, {0, 1, 5, 2}), c[0].tensor()));
  EXPECT_TRUE(Same(I64({1, 0}), c[1].tensor()));
  EXPECT_TRUE(Same(I64({1, 0, 1}), c[2].tensor()));
  EXPECT_TRUE(Same(I64({1, 2}), c[3].tensor()));

  OpTest strings("Unique", 11);
  strings.Input(Tensor::FromVector<std::string>({4}, {"b", "a", "b", ""}));
  auto s = RunUnique(strings);
  EXPECT_TRUE(Same(Tensor::FromVector<std::string>({3}, {"", "a", "b"}), s[0].tensor()));
  EXPECT_TRUE(Same(I64({1, 1, 2}), s[3].tensor()));

  OpTest empty("Unique", 11);
  empty.Input(Iota<float>({0}));
  auto e = RunUnique(empty);
  EXPECT_EQ(e[0].tensor().shape(), (Shape{0}));

  OpTest nan("Unique", 11);
  nan.Input(F32({4}, {NAN, 1, NAN, 0}));
  auto n = RunUnique(nan);
  EXPECT_EQ(n[0].tensor().shape(), (Shape{3}));  // 0, 1, NaN
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
