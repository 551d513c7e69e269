#include <gtest/gtest.h>

#include "ops/framework/tensor_proto.h"
#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

TEST(Constant, ValueTensorIsSharedAcrossRuns) {
  OpTest test("Constant", 13);
  test.Attr("value", Iota<std::string>({2, 2}));
  EXPECT_TRUE(Same(Iota<std::string>({2, 2}), Out(test)));
}

TEST(Constant, ScalarAndListAttributes) {
  {
    OpTest t("Constant", 13);
    t.Attr("value_float", 2.5f);
    EXPECT_TRUE(Same(Tensor::Scalar<float>(2.5f), Out(t)));
  }
  {
    OpTest t("Constant", 13);
    t.Attr("value_floats", std::vector<float>{1, 2});
    EXPECT_TRUE(Same(F32({2}, {1, 2}), Out(t)));
  }
  {
    OpTest t("Constant", 13);
    t.Attr("value_int", int64_t{-7});
    EXPECT_TRUE(Same(Tensor::Scalar<int64_t>(-7), Out(t)));
  }
  {
    OpTest t("Constant", 13);
    t.Attr("value_ints", std::vector<int64_t>{4, 5, 6});
    EXPECT_TRUE(Same(I64({4, 5, 6}), Out(t)));
  }
  {
    OpTest t("Constant", 13);
    t.Attr("value_string", std::string("hi"));
    EXPECT_TRUE(Same(Tensor::Scalar<std::string>("hi"), Out(t)));
  }
  {
    OpTest t("Constant", 13);
    t.Attr("value_strings", std::vector<std::string>{"a", "b"});
    EXPECT_TRUE(Same(Tensor::FromVector<std::string>({2}, {"a", "b"}), Out(t)));
  }
}

onnx::AttributeProto* AddSparse(OpTest& test, const Shape& dims, const Tensor& values, const Tensor& indices) {
  auto* a = test.node().add_attribute();
  a->set_name("sparse_value");
  a->set_type(onnx::AttributeProto::SPARSE_TENSOR);
  for (int64_t d : dims) a->mutable_sparse_tensor()->add_dims(d);
  TensorToProto(values, a->mutable_sparse_tensor()->mutable_values());
  TensorToProto(indices, a->mutable_sparse_tensor()->mutable_indices());
  return a;
}

TEST(Constant, SparseValueLinearAndCoordinateIndices) {
  OpTest linear("Constant", 13);
  AddSparse(linear, {2, 3}, F32({2}, {5, 7}), I64({2}, {1, 5}));
  EXPECT_TRUE(Same(F32({2, 3}, {0, 5, 0, 0, 0, 7}), Out(linear)));

  OpTest coords("Constant", 13);
  AddSparse(coords, {2, 3}, F32({2}, {5, 7}), I64({2, 2}, {0, 1, 1, 2}));
  EXPECT_TRUE(Same(F32({2, 3}, {0, 5, 0, 0, 0, 7}), Out(coords)));

  OpTest bad("Constant", 13);
  AddSparse(bad, {2, 3}, F32({1}, {5}), I64({1}, {6}));
  EXPECT_EQ(RunOp(bad).status().code(), StatusCode::kOutOfRange);
}

TEST(Constant, NeedsExactlyOneAttribute) {
  OpTest none("Constant", 13);
  EXPECT_TRUE(Refused(RunOp(none), StatusCode::kInvalidArgument, "Constant needs exactly one of value, sparse_value, value_float(s), value_int(s), value_string(s);"));
}

template <typename T>
class ConstantOfShapeTyped : public ::testing::Test {};
TYPED_TEST_SUITE(ConstantOfShapeTyped, AllTypes);

TYPED_TEST(ConstantOfShapeTyped, FillsEveryType) {
  const Tensor value = Iota<TypeParam>({1}, 4);
  OpTest test("ConstantOfShape", 20);
  test.Input(I64({2}, {2, 3})).Attr("value", value);
  const Tensor y = Out(test);
  Tensor expected(DataTypeOf<TypeParam>::value, {2, 3});
  for (int64_t i = 0; i < 6; ++i) expected.mutable_data<TypeParam>()[i] = value.data<TypeParam>()[0];
  EXPECT_TRUE(Same(expected, y));
}

TEST(ConstantOfShape, DefaultsZeroFloatScalarAndEmpty) {
  OpTest scalar("ConstantOfShape", 20);
  scalar.Input(I64({0}, {}));
  EXPECT_TRUE(Same(Tensor::Scalar<float>(0), Out(scalar)));

  OpTest empty("ConstantOfShape", 20);
  empty.Input(I64({2}, {3, 0})).Attr("value", Tensor::FromVector<int32_t>({1}, {9}));
  EXPECT_EQ(Out(empty).shape(), (Shape{3, 0}));

  OpTest negative("ConstantOfShape", 20);
  negative.Input(I64({2}, {3, -1}));
  EXPECT_EQ(RunOp(negative).status().code(), StatusCode::kInvalidArgument);

  OpTest huge("ConstantOfShape", 20);
  huge.Input(I64({3}, {1 << 20, 1 << 20, 1 << 20}));
  EXPECT_TRUE(Refused(RunOp(huge), StatusCode::kResourceExhausted, "output 0 of shape [1048576,1048576,1048576] (float32) exceeds the limit of 4294967296 bytes per"));
}

TEST(EyeLike, DiagonalsAndDtype) {
  OpTest test("EyeLike", 22);
  test.Input(Iota<int32_t>({3, 4})).Attr("k", int64_t{1});
  EXPECT_TRUE(Same(Tensor::FromVector<int32_t>({3, 4}, {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}), Out(test)));

  OpTest neg("EyeLike", 22);
  neg.Input(Iota<float>({3, 2})).Attr("k", int64_t{-1}).Attr("dtype", int64_t{11});
  EXPECT_TRUE(Same(Tensor::FromVector<double>({3, 2}, {0, 0, 1, 0, 0, 1}), Out(neg)));

  OpTest half("EyeLike", 22);
  half.Input(Iota<Float16>({2, 2}));
  const Tensor h = Out(half);
  EXPECT_EQ(HalfToFloat(h.data<Float16>()[0].bits), 1.0f);
  EXPECT_EQ(HalfToFloat(h.data<Float16>()[1].bits), 0.0f);

  OpTest far("EyeLike", 22);
  far.Input(Iota<float>({2, 2})).Attr("k", INT64_MIN);
  EXPECT_TRUE(Same(F32({2, 2}, {0, 0, 0, 0}), Out(far)));

  OpTest rank("EyeLike", 22);
  rank.Input(Iota<float>({3}));
  EXPECT_TRUE(Refused(RunOp(rank), StatusCode::kInvalidArgument, "input must be 2-D, got [3]"));
}

TEST(Range, IntegerFloatAndHalf) {
  OpTest ints("Range", 11);
  ints.Input(Tensor::Scalar<int32_t>(10)).Input(Tensor::Scalar<int32_t>(4)).Input(Tensor::Scalar<int32_t>(-3));
  EXPECT_TRUE(Same(Tensor::FromVector<int32_t>({2}, {10, 7}), Out(ints)));

  OpTest floats("Range", 11);
  floats.Input(Tensor::Scalar<float>(1)).Input(Tensor::Scalar<float>(2)).Input(Tensor::Scalar<float>(0.3f));
  const Tensor f = Out(floats);
  ASSERT_EQ(f.shape(), (Shape{4}));
  EXPECT_FLOAT_EQ(f.data<float>()[3], 1.9f);

  OpTest half("Range", 27);
  half.Input(Tensor::Scalar<Float16>(FromCompute<Float16>(0)))
      .Input(Tensor::Scalar<Float16>(FromCompute<Float16>(3)))
      .Input(Tensor::Scalar<Float16>(FromCompute<Float16>(1)));
  const Tensor h = Out(half);
  ASSERT_EQ(h.shape(), (Shape{3}));
  EXPECT_EQ(HalfToFloat(h.data<Float16>()[2].bits), 2.0f);

  OpTest empty("Range", 11);
  empty.Input(Tensor::Scalar<int64_t>(5)).Input(Tensor::Scalar<int64_t>(1)).Input(Tensor::Scalar<int64_t>(2));
  EXPECT_EQ(Out(empty).shape(), (Shape{0}));
}

TEST(Range, ZeroDeltaAndHugeCountsFail) {
  OpTest zero("Range", 11);
  zero.Input(Tensor::Scalar<int64_t>(0)).Input(Tensor::Scalar<int64_t>(5)).Input(Tensor::Scalar<int64_t>(0));
  EXPECT_EQ(RunOp(zero).status().code(), StatusCode::kInvalidArgument);
  OpTest huge("Range", 11);
  huge.Input(Tensor::Scalar<int64_t>(INT64_MIN)).Input(Tensor::Scalar<int64_t>(INT64_MAX)).Input(
      Tensor::Scalar<int64_t>(1));
  EXPECT_TRUE(Refused(RunOp(huge), StatusCode::kInvalidArgument, "Range has too many elements"));
  OpTest nan("Range", 11);
  nan.Input(Tensor::Scalar<float>(0)).Input(Tensor::Scalar<float>(NAN)).Input(Tensor::Scalar<float>(1));
  EXPECT_TRUE(Refused(RunOp(nan), StatusCode::kInvalidArgument, "Range bounds are NaN"));
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
