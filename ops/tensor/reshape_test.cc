#include <gtest/gtest.h>

#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

template <typename T>
class ReshapeTyped : public ::testing::Test {};
TYPED_TEST_SUITE(ReshapeTyped, AllTypes);

// Every dtype: the output has the new shape and shares the input's bytes.
TYPED_TEST(ReshapeTyped, SharesStorageForEveryType) {
  const Tensor x = Iota<TypeParam>({2, 3, 4});
  OpTest test("Reshape", 14);
  test.Input(x).Input(I64({3}, {4, 0, -1}));
  const Tensor y = Out(test);
  EXPECT_EQ(y.shape(), (Shape{4, 3, 2}));
  EXPECT_TRUE(y.SharesStorageWith(x));
  EXPECT_TRUE(Same(x.Reshaped({4, 3, 2}), y));
}

TEST(Reshape, ZeroCopiesDimUnlessAllowzero) {
  const Tensor x = Iota<float>({0, 3});
  OpTest copy("Reshape", 14);
  copy.Input(x).Input(I64({2}, {3, 0}));
  // 0 copies dim 1 (3): [3,3] has 9 elements, the input has none.
  EXPECT_TRUE(Refused(RunOp(copy), StatusCode::kInvalidArgument, "cannot reshape input [0,3] (0 elements) to [3,3] (9 elements)"));

  OpTest allow("Reshape", 14);
  allow.Input(x).Input(I64({2}, {3, 0})).Attr("allowzero", int64_t{1});
  EXPECT_EQ(Out(allow).shape(), (Shape{3, 0}));
}

TEST(Reshape, InfersMinusOneAndRejectsBadShapes) {
  const Tensor x = Iota<int32_t>({2, 6});
  OpTest ok("Reshape", 13);
  ok.Input(x).Input(I64({3}, {-1, 2, 2}));
  EXPECT_EQ(Out(ok).shape(), (Shape{3, 2, 2}));

  OpTest two_inferred("Reshape", 13);
  two_inferred.Input(x).Input(I64({2}, {-1, -1}));
  EXPECT_EQ(RunOp(two_inferred).status().code(), StatusCode::kInvalidArgument);

  OpTest wrong_count("Reshape", 13);
  wrong_count.Input(x).Input(I64({2}, {5, 2}));
  EXPECT_EQ(RunOp(wrong_count).status().code(), StatusCode::kInvalidArgument);

  OpTest not_divisible("Reshape", 13);
  not_divisible.Input(x).Input(I64({2}, {5, -1}));
  EXPECT_TRUE(Refused(RunOp(not_divisible), StatusCode::kInvalidArgument, "cannot reshape input [2,6] to [5,-1]"));

  OpTest negative("Reshape", 13);
  negative.Input(x).Input(I64({2}, {-2, -6}));
  EXPECT_TRUE(Refused(RunOp(negative), StatusCode::kInvalidArgument, "shape [-2,-6] has a negative dim -2"));
}

TEST(Reshape, Opset1TakesShapeAttribute) {
  OpTest test("Reshape", 1);
  test.Input(Iota<float>({2, 3})).Attr("shape", std::vector<int64_t>{3, 2});
  EXPECT_EQ(Out(test).shape(), (Shape{3, 2}));
}

TEST(Flatten, AxesIncludingNegativeAndZero) {
  const Tensor x = Iota<float>({2, 3, 4, 5});
  const std::vector<std::pair<int64_t, Shape>> cases = {
      {0, {1, 120}}, {1, {2, 60}}, {3, {24, 5}}, {4, {120, 1}}, {-1, {24, 5}}, {-4, {1, 120}}};
  for (const auto& [axis, shape] : cases) {
    OpTest test("Flatten", 13);
    test.Input(x).Attr("axis", axis);
    const Tensor y = Out(test);
    EXPECT_EQ(y.shape(), shape) << "axis " << axis;
    EXPECT_TRUE(y.SharesStorageWith(x));
  }
  OpTest bad("Flatten", 13);
  bad.Input(x).Attr("axis", int64_t{5});
  EXPECT_TRUE(Refused(RunOp(bad), StatusCode::kInvalidArgument, "axis 5 is out of range for input of rank 4"));
}

TEST(Flatten, ZeroSizeDims) {
  OpTest test("Flatten", 13);
  test.Input(Iota<float>({0, 3, 2})).Attr("axis", int64_t{2});
  EXPECT_EQ(Out(test).shape(), (Shape{0, 2}));
}

TEST(Squeeze, AllOnesWithoutAxes) {
  OpTest test("Squeeze", 13);
  test.Input(Iota<std::string>({1, 3, 1, 2}));
  const Tensor y = Out(test);
  EXPECT_EQ(y.shape(), (Shape{3, 2}));
  EXPECT_TRUE(Same(Iota<std::string>({3, 2}), y));
}

TEST(Squeeze, AxesInputNegativeAndErrors) {
  const Tensor x = Iota<bool>({1, 3, 1});
  OpTest test("Squeeze", 13);
  test.Input(x).Input(I64({1}, {-1}));
  EXPECT_EQ(Out(test).shape(), (Shape{1, 3}));

  OpTest not_one("Squeeze", 13);
  not_one.Input(x).Input(I64({1}, {1}));
  EXPECT_EQ(RunOp(not_one).status().code(), StatusCode::kInvalidArgument);

  OpTest out_of_range("Squeeze", 13);
  out_of_range.Input(x).Input(I64({1}, {3}));
  EXPECT_TRUE(Refused(RunOp(out_of_range), StatusCode::kInvalidArgument, "Squeeze axes: axis 3 is out of range for rank 3"));
}

TEST(Squeeze, EmptyAxesInputSqueezesAllOnes) {
  OpTest test("Squeeze", 13);
  test.Input(Iota<float>({1, 3, 1})).Input(I64({0}, {}));
  EXPECT_EQ(Out(test).shape(), (Shape{3}));
}

TEST(Squeeze, Opset11AxesAttribute) {
  OpTest test("Squeeze", 11);
  test.Input(Iota<float>({1, 3, 1})).Attr("axes", std::vector<int64_t>{0, -1});
  EXPECT_EQ(Out(test).shape(), (Shape{3}));
}

TEST(Unsqueeze, AxesReferToTheOutput) {
  const Tensor x = Iota<float>({3, 4});
  OpTest test("Unsqueeze", 13);
  test.Input(x).Input(I64({3}, {-1, 0, 2}));
  const Tensor y = Out(test);
  EXPECT_EQ(y.shape(), (Shape{1, 3, 1, 4, 1}));
  EXPECT_TRUE(y.SharesStorageWith(x));

  OpTest attr("Unsqueeze", 11);
  attr.Input(x).Attr("axes", std::vector<int64_t>{1});
  EXPECT_EQ(Out(attr).shape(), (Shape{3, 1, 4}));

  OpTest scalar("Unsqueeze", 13);
  scalar.Input(Tensor::Scalar<int64_t>(5)).Input(I64({1}, {0}));
  EXPECT_EQ(Out(scalar).shape(), (Shape{1}));
}

TEST(Unsqueeze, DuplicateAndOutOfRangeAxesFail) {
  const Tensor x = Iota<float>({3});
  OpTest dup("Unsqueeze", 13);
  dup.Input(x).Input(I64({2}, {0, 0}));
  EXPECT_TRUE(Refused(RunOp(dup), StatusCode::kInvalidArgument, "Unsqueeze axes: axis 0 appears more than once"));
  OpTest range("Unsqueeze", 13);
  range.Input(x).Input(I64({1}, {2}));
  EXPECT_TRUE(Refused(RunOp(range), StatusCode::kInvalidArgument, "Unsqueeze axes: axis 2 is out of range for rank 2"));
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
