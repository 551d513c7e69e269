#include <algorithm>
#include <numeric>

#include <gtest/gtest.h>

#include "ops/framework/shape.h"
#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

// Plain reference: walk every output index and read the input element it names.
template <typename T>
Tensor ReferenceTranspose(const Tensor& x, const std::vector<int64_t>& perm) {
  const int64_t rank = x.rank();
  Shape out_shape(rank);
  for (int64_t i = 0; i < rank; ++i) out_shape[i] = x.dim(perm[i]);
  Tensor y(x.dtype(), out_shape);
  const std::vector<int64_t> in_strides = Strides(x.shape());
  std::vector<int64_t> idx(rank, 0);
  for (int64_t o = 0; o < y.size(); ++o) {
    int64_t rest = o, src = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      idx[d] = rest % out_shape[d];
      rest /= out_shape[d];
      src += idx[d] * in_strides[perm[d]];
    }
    y.mutable_data<T>()[o] = x.data<T>()[src];
  }
  return y;
}

Tensor RunTranspose(const Tensor& x, const std::vector<int64_t>& perm, int threads = 1) {
  OpTest test("Transpose", 13);
  test.Input(x).Attr("perm", perm).Threads(threads);
  return Out(test);
}

template <typename T>
class TransposeTyped : public ::testing::Test {};
TYPED_TEST_SUITE(TransposeTyped, AllTypes);

TYPED_TEST(TransposeTyped, EveryTypeMatchesReference) {
  const Tensor x = Iota<TypeParam>({3, 5, 2});
  for (const auto& perm : std::vector<std::vector<int64_t>>{{2, 1, 0}, {0, 2, 1}, {1, 0, 2}, {2, 0, 1}}) {
    EXPECT_TRUE(Same(ReferenceTranspose<TypeParam>(x, perm), RunTranspose(x, perm)));
  }
}

TEST(Transpose, AllPermutationsOfOddShapes) {
  for (const Shape& shape : std::vector<Shape>{{7}, {3, 17}, {1, 5, 1}, {3, 1, 4, 5}, {2, 3, 5, 7}, {4, 1, 3, 1, 6}}) {
    const Tensor x = Iota<float>(shape);
    std::vector<int64_t> perm(shape.size());
    std::iota(perm.begin(), perm.end(), int64_t{0});
    do {
      EXPECT_TRUE(Same(ReferenceTranspose<float>(x, perm), RunTranspose(x, perm))) << ShapeToString(shape) << " perm "
                                                                                      << ShapeToString(perm);
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
}

TEST(Transpose, LargeBlockedAndGeneralPathsInParallel) {
  const Tensor m = Iota<float>({601, 517});
  EXPECT_TRUE(Same(ReferenceTranspose<float>(m, {1, 0}), RunTranspose(m, {1, 0}, 2)));
  const Tensor b = Iota<uint16_t>({3, 257, 333});
  EXPECT_TRUE(Same(ReferenceTranspose<uint16_t>(b, {0, 2, 1}), RunTranspose(b, {0, 2, 1}, 2)));
  const Tensor g = Iota<double>({8, 33, 37, 41});
  EXPECT_TRUE(Same(ReferenceTranspose<double>(g, {0, 2, 3, 1}), RunTranspose(g, {0, 2, 3, 1}, 2)));
  EXPECT_TRUE(Same(ReferenceTranspose<double>(g, {3, 1, 0, 2}), RunTranspose(g, {3, 1, 0, 2}, 2)));
}

// Bytes go through 8x8 blocks held in words: every remainder of rows and columns modulo 8 (a
// partial block at each edge), matrices narrower than one block, and batches of them.
TEST(Transpose, ByteBlocksAtEveryEdge) {
  for (int64_t rows : {1, 3, 4, 8, 9, 15, 16, 37}) {
    for (int64_t cols : {1, 2, 7, 8, 13, 34, 40, 71}) {
      for (int64_t batches : {1, 3}) {
        Tensor x(DataType::kUint8, {batches, rows, cols});
        for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 7 + i / 256);
        EXPECT_TRUE(Same(ReferenceTranspose<uint8_t>(x, {0, 2, 1}), RunTranspose(x, {0, 2, 1}, 2)))
            << batches << "x" << rows << "x" << cols;
      }
    }
  }
  const Tensor nchw = Iota<int8_t>({1, 136, 28, 28});  // a quantized region's edge
  EXPECT_TRUE(Same(ReferenceTranspose<int8_t>(nchw, {0, 2, 3, 1}), RunTranspose(nchw, {0, 2, 3, 1}, 2)));
}

TEST(Transpose, DefaultReversesAndZeroSizeWorks) {
  const Tensor x = Iota<int32_t>({2, 3, 4});
  OpTest test("Transpose", 13);
  test.Input(x);
  EXPECT_TRUE(Same(ReferenceTranspose<int32_t>(x, {2, 1, 0}), Out(test)));
  EXPECT_EQ(RunTranspose(Iota<float>({0, 3}), {1, 0}).shape(), (Shape{3, 0}));
}

TEST(Transpose, MovingOnlyUnitDimsSharesStorage) {
  const Tensor x = Iota<float>({1, 3, 1, 4});
  const Tensor y = RunTranspose(x, {1, 0, 3, 2});
  EXPECT_EQ(y.shape(), (Shape{3, 1, 4, 1}));
  EXPECT_TRUE(y.SharesStorageWith(x));
  EXPECT_TRUE(Same(ReferenceTranspose<float>(x, {1, 0, 3, 2}), y));
}

TEST(Transpose, BadPermFails) {
  OpTest test("Transpose", 13);
  test.Input(Iota<float>({2, 3})).Attr("perm", std::vector<int64_t>{0, 0});
  EXPECT_EQ(RunOp(test).status().code(), StatusCode::kInvalidArgument);
  OpTest wrong_len("Transpose", 13);
  wrong_len.Input(Iota<float>({2, 3})).Attr("perm", std::vector<int64_t>{0});
  EXPECT_TRUE(Refused(RunOp(wrong_len), StatusCode::kInvalidArgument, "perm has 1 entries but the input has rank 2"));
}

TEST(DepthToSpace, DcrAndCrdThenSpaceToDepthRoundTrip) {
  // Spec example for DCR: x[0, c, h, w] = c * 4 + h * 2 + w ... checked by reference reshapes.
  const Tensor x = Iota<float>({1, 8, 2, 3});
  OpTest dcr("DepthToSpace", 13);
  dcr.Input(x).Attr("blocksize", int64_t{2});
  const Tensor y = Out(dcr);
  ASSERT_EQ(y.shape(), (Shape{1, 2, 4, 6}));
  // DCR: y[n, c, h*b + i, w*b + j] = x[n, (i*b + j) * C' + c, h, w]
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t w = 0; w < 3; ++w)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            const float expected = x.data<float>()[(((i * 2 + j) * 2 + c) * 2 + h) * 3 + w];
            EXPECT_EQ(y.data<float>()[(c * 4 + h * 2 + i) * 6 + w * 2 + j], expected);
          }
  OpTest crd("DepthToSpace", 13);
  crd.Input(x).Attr("blocksize", int64_t{2}).Attr("mode", std::string("CRD"));
  const Tensor z = Out(crd);
  // CRD: y[n, c, h*b + i, w*b + j] = x[n, c*b*b + i*b + j, h, w]
  for (int64_t c = 0; c < 2; ++c)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t w = 0; w < 3; ++w)
        for (int64_t i = 0; i < 2; ++i)
          for (int64_t j = 0; j < 2; ++j) {
            EXPECT_EQ(z.data<float>()[(c * 4 + h * 2 + i) * 6 + w * 2 + j],
                      x.data<float>()[((c * 4 + i * 2 + j) * 2 + h) * 3 + w]);
          }
  // SpaceToDepth inverts DCR DepthToSpace.
  OpTest s2d("SpaceToDepth", 13);
  s2d.Input(y).Attr("blocksize", int64_t{2});
  EXPECT_TRUE(Same(x, Out(s2d)));
}

TEST(DepthToSpace, BadShapesFail) {
  OpTest channels("DepthToSpace", 13);
  channels.Input(Iota<float>({1, 6, 2, 2})).Attr("blocksize", int64_t{2});
  EXPECT_TRUE(Refused(RunOp(channels), StatusCode::kInvalidArgument, "channels 6 are not a multiple of blocksize^2 = 4"));
  OpTest spatial("SpaceToDepth", 13);
  spatial.Input(Iota<float>({1, 1, 3, 2})).Attr("blocksize", int64_t{2});
  EXPECT_TRUE(Refused(RunOp(spatial), StatusCode::kInvalidArgument, "spatial dims 3x2 are not multiples of blocksize 2"));
  OpTest rank("SpaceToDepth", 13);
  rank.Input(Iota<float>({4, 4})).Attr("blocksize", int64_t{2});
  EXPECT_TRUE(Refused(RunOp(rank), StatusCode::kInvalidArgument, "input must be 4-D [N,C,H,W], got [4,4]"));
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
