#include <gtest/gtest.h>

#include "ops/framework/shape.h"
#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

// out[o] = x[o mod shape] / x broadcast: both are "read index o_d mod dim_d" (broadcast dims are 1).
template <typename T>
Tensor ReferenceModRead(const Tensor& x, const Shape& out_shape) {
  Tensor y(x.dtype(), out_shape);
  const int64_t rank = static_cast<int64_t>(out_shape.size());
  const int64_t offset = rank - x.rank();
  const std::vector<int64_t> strides = Strides(x.shape());
  for (int64_t o = 0; o < y.size(); ++o) {
    int64_t rest = o, src = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t i = rest % out_shape[d];
      rest /= out_shape[d];
      if (d >= offset) src += (i % x.dim(d - offset)) * strides[d - offset];
    }
    y.mutable_data<T>()[o] = x.data<T>()[src];
  }
  return y;
}

template <typename T>
class TileTyped : public ::testing::Test {};
TYPED_TEST_SUITE(TileTyped, AllTypes);

TYPED_TEST(TileTyped, EveryType) {
  const Tensor x = Iota<TypeParam>({2, 3});
  OpTest test("Tile", 13);
  test.Input(x).Input(I64({2, 3}));
  EXPECT_TRUE(Same(ReferenceModRead<TypeParam>(x, {4, 9}), Out(test)));
}

TEST(Tile, ZeroRepeatsOpset1AndErrors) {
  OpTest zero("Tile", 13);
  zero.Input(Iota<float>({2, 3})).Input(I64({0, 2}));
  EXPECT_EQ(Out(zero).shape(), (Shape{0, 6}));

  OpTest old("Tile", 1);
  old.Input(Iota<float>({2, 3})).Input(Tensor::Scalar<int64_t>(3)).Input(Tensor::Scalar<int64_t>(-2));
  EXPECT_TRUE(Same(ReferenceModRead<float>(Iota<float>({2, 3}), {6, 3}), Out(old)));

  OpTest negative("Tile", 13);
  negative.Input(Iota<float>({2, 3})).Input(I64({-1, 2}));
  EXPECT_EQ(RunOp(negative).status().code(), StatusCode::kInvalidArgument);

  OpTest count("Tile", 13);
  count.Input(Iota<float>({2, 3})).Input(I64({2}));
  EXPECT_TRUE(Refused(RunOp(count), StatusCode::kInvalidArgument, "input 'repeats' has 1 entries for rank 2"));

  OpTest huge("Tile", 13);
  huge.Input(Iota<float>({2, 3})).Input(I64({INT64_MAX / 2, 1 << 30}));
  EXPECT_TRUE(Refused(RunOp(huge), StatusCode::kInvalidArgument, "shape [9223372036854775806,3221225472] has too many elements"));

  const Tensor big = Iota<float>({7, 300});
  OpTest par("Tile", 13);
  par.Input(big).Input(I64({40, 2})).Threads(2);
  EXPECT_TRUE(Same(ReferenceModRead<float>(big, {280, 600}), Out(par)));
}

TEST(Expand, BidirectionalBroadcastAndSharing) {
  const Tensor x = Iota<std::string>({3, 1});
  OpTest test("Expand", 13);
  test.Input(x).Input(I64({2, 1, 4}));
  EXPECT_TRUE(Same(ReferenceModRead<std::string>(x, {2, 3, 4}), Out(test)));

  // The requested shape may be smaller: [3,1] against [1] stays [3,1] (and is not copied).
  OpTest same("Expand", 13);
  same.Input(x).Input(I64({1}));
  EXPECT_TRUE(Out(same).SharesStorageWith(x));

  OpTest row("Expand", 13);
  row.Input(Iota<int8_t>({1, 5})).Input(I64({3, 1}));
  EXPECT_TRUE(Same(ReferenceModRead<int8_t>(Iota<int8_t>({1, 5}), {3, 5}), Out(row)));

  OpTest scalar("Expand", 13);
  scalar.Input(Tensor::Scalar<bool>(true)).Input(I64({2, 0}));
  EXPECT_EQ(Out(scalar).shape(), (Shape{2, 0}));
}

TEST(Expand, IncompatibleAndAbsurdShapesFail) {
  OpTest bad("Expand", 13);
  bad.Input(Iota<float>({3})).Input(I64({4}));
  EXPECT_EQ(RunOp(bad).status().code(), StatusCode::kInvalidArgument);

  OpTest negative("Expand", 13);
  negative.Input(Iota<float>({3})).Input(I64({-1, 3}));
  EXPECT_TRUE(Refused(RunOp(negative), StatusCode::kInvalidArgument, "input 'shape' has a negative dim -1"));

  OpTest huge("Expand", 13);
  huge.Input(Iota<float>({3})).Input(I64({1 << 30, 1 << 30, 3}));
  EXPECT_TRUE(Refused(RunOp(huge), StatusCode::kResourceExhausted, "output 0 of shape [1073741824,1073741824,3] (float32) exceeds the limit of 4294967296 bytes per"));
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
