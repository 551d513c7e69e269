#include <gtest/gtest.h>

#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

template <typename T>
class ScatterTyped : public ::testing::Test {};
TYPED_TEST_SUITE(ScatterTyped, AllTypes);

TYPED_TEST(ScatterTyped, ScatterNDReplacesRowsForEveryType) {
  const Tensor data = Iota<TypeParam>({3, 2});
  const Tensor updates = Iota<TypeParam>({1, 2}, 50);
  OpTest test("ScatterND", 18);
  test.Input(data).Input(I64({1, 1}, {-2})).Input(updates);
  const Tensor y = Out(test);
  Tensor expected = data.Clone();
  expected.mutable_data<TypeParam>()[2] = updates.data<TypeParam>()[0];
  expected.mutable_data<TypeParam>()[3] = updates.data<TypeParam>()[1];
  EXPECT_TRUE(Same(expected, y));
  EXPECT_FALSE(y.SharesStorageWith(data));
}

TEST(ScatterElements, ReductionsWithDuplicates) {
  const Tensor data = F32({1, 5}, {1, 2, 3, 4, 5});
  const Tensor indices = I64({1, 3}, {1, -4, 3});  // -4 is 1 again
  const Tensor updates = F32({1, 3}, {10, 20, 0.5f});
  const std::vector<std::pair<std::string, std::vector<float>>> cases = {
      {"none", {1, 20, 3, 0.5f, 5}},
      {"add", {1, 32, 3, 4.5f, 5}},
      {"mul", {1, 400, 3, 2, 5}},
      {"max", {1, 20, 3, 4, 5}},
      {"min", {1, 2, 3, 0.5f, 5}}};
  for (const auto& [reduction, expected] : cases) {
    OpTest test("ScatterElements", 18);
    test.Input(data).Input(indices).Input(updates).Attr("axis", int64_t{1}).Attr("reduction", reduction);
    EXPECT_TRUE(Same(F32({1, 5}, expected), Out(test))) << reduction;
  }
}

TEST(ScatterElements, Axis0HalfAndBoolReductions) {
  OpTest half("ScatterElements", 18);
  half.Input(Tensor::FromVector<Float16>({2, 2}, {FromCompute<Float16>(1), FromCompute<Float16>(2),
                                                  FromCompute<Float16>(3), FromCompute<Float16>(4)}))
      .Input(I64({1, 2}, {1, 0}))
      .Input(Tensor::FromVector<Float16>({1, 2}, {FromCompute<Float16>(0.5f), FromCompute<Float16>(8)}))
      .Attr("reduction", std::string("add"));
  const Tensor h = Out(half);
  EXPECT_EQ(HalfToFloat(h.data<Float16>()[1].bits), 10.0f);  // 2 + 8
  EXPECT_EQ(HalfToFloat(h.data<Float16>()[2].bits), 3.5f);   // 3 + 0.5

  OpTest logical("ScatterElements", 18);
  logical.Input(Tensor::FromVector<bool>({3}, {true, false, true}))
      .Input(I64({2}, {0, 1}))
      .Input(Tensor::FromVector<bool>({2}, {false, true}))
      .Attr("reduction", std::string("mul"));
  EXPECT_TRUE(Same(Tensor::FromVector<bool>({3}, {false, false, true}), Out(logical)));
}

TEST(ScatterElements, DeprecatedScatterAndErrors) {
  OpTest old("Scatter", 10);
  old.Input(F32({3}, {0, 0, 0})).Input(Tensor::FromVector<int32_t>({1}, {2})).Input(F32({1}, {7}));
  EXPECT_TRUE(Same(F32({3}, {0, 0, 7}), Out(old)));

  OpTest range("ScatterElements", 18);
  range.Input(F32({3}, {0, 0, 0})).Input(I64({1}, {3})).Input(F32({1}, {7}));
  EXPECT_EQ(RunOp(range).status().code(), StatusCode::kOutOfRange);

  OpTest shapes("ScatterElements", 18);
  shapes.Input(F32({3}, {0, 0, 0})).Input(I64({2}, {0, 1})).Input(F32({1}, {7}));
  EXPECT_TRUE(Refused(RunOp(shapes), StatusCode::kInvalidArgument, "input 'indices' [2] and 'updates' [1] must have the same shape"));

  OpTest reduction("ScatterElements", 18);
  reduction.Input(F32({3}, {0, 0, 0})).Input(I64({1}, {0})).Input(F32({1}, {7})).Attr("reduction", std::string("avg"));
  EXPECT_TRUE(Refused(RunOp(reduction), StatusCode::kInvalidArgument, "unknown reduction 'avg'"));

  OpTest strings("ScatterElements", 18);
  strings.Input(Iota<std::string>({2})).Input(I64({1}, {0})).Input(Iota<std::string>({1}, 9)).Attr(
      "reduction", std::string("add"));
  EXPECT_TRUE(Refused(RunOp(strings), StatusCode::kUnimplemented, "type string is not supported here"));
}

TEST(ScatterND, ElementIndicesWithReductionAndErrors) {
  OpTest add("ScatterND", 18);
  add.Input(Tensor::FromVector<int32_t>({2, 2}, {1, 2, 3, 4}))
      .Input(I64({3, 2}, {0, 0, 1, 1, 0, 0}))
      .Input(Tensor::FromVector<int32_t>({3}, {10, 20, 30}))
      .Attr("reduction", std::string("add"));
  EXPECT_TRUE(Same(Tensor::FromVector<int32_t>({2, 2}, {41, 2, 3, 24}), Out(add)));

  OpTest range("ScatterND", 18);
  range.Input(Iota<float>({2, 2})).Input(I64({1, 2}, {0, 2})).Input(F32({1}, {1}));
  EXPECT_EQ(RunOp(range).status().code(), StatusCode::kOutOfRange);

  OpTest shape("ScatterND", 18);
  shape.Input(Iota<float>({2, 2})).Input(I64({1, 1}, {0})).Input(F32({1}, {1}));
  EXPECT_TRUE(Refused(RunOp(shape), StatusCode::kInvalidArgument, "input 'updates' has shape [1], expected [1,2]"));
}

TEST(TensorScatter, LinearCircularAndOverflow) {
  // past [batch 2, seq 4, 1], update [2, 2, 1].
  const Tensor past = F32({2, 4, 1}, {0, 1, 2, 3, 10, 11, 12, 13});
  const Tensor update = F32({2, 2, 1}, {-1, -2, -3, -4});
  OpTest linear("TensorScatter", 24);
  linear.Input(past).Input(update).Input(I64({1, 2})).Attr("axis", int64_t{1});
  EXPECT_TRUE(Same(F32({2, 4, 1}, {0, -1, -2, 3, 10, 11, -3, -4}), Out(linear)));

  OpTest prefill("TensorScatter", 24);
  prefill.Input(past).Input(update).Attr("axis", int64_t{1});
  EXPECT_TRUE(Same(F32({2, 4, 1}, {-1, -2, 2, 3, -3, -4, 12, 13}), Out(prefill)));

  OpTest circular("TensorScatter", 24);
  circular.Input(past).Input(update).Input(I64({3, 0})).Attr("axis", int64_t{1}).Attr("mode", std::string("circular"));
  EXPECT_TRUE(Same(F32({2, 4, 1}, {-2, 1, 2, -1, -3, -4, 12, 13}), Out(circular)));

  OpTest overflow("TensorScatter", 24);
  overflow.Input(past).Input(update).Input(I64({3, 0})).Attr("axis", int64_t{1});
  EXPECT_EQ(RunOp(overflow).status().code(), StatusCode::kOutOfRange);

  OpTest batch_axis("TensorScatter", 24);
  batch_axis.Input(past).Input(update).Attr("axis", int64_t{0});
  EXPECT_TRUE(Refused(RunOp(batch_axis), StatusCode::kInvalidArgument, "axis cannot be 0 (the batch dimension)"));
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
