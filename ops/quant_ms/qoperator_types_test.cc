// The plain ONNX ops that ONNX Runtime's quantizer (QOperator format) leaves running on the 8-bit
// tensors between its QLinear ops: each runs here on uint8 and int8 through the full registry, with
// exact outputs. Values are written as int8 values; Q maps them to uint8 by adding 128, which keeps
// their order and their differences, so one expectation serves both types, and the uint8 bytes sit
// above 127 where int8's are negative (a kernel that reads the wrong signedness fails).
#include <algorithm>
#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/testing.h"
#include "ops/register_all.h"

namespace onnxflow {
namespace {

template <typename T>
class QOperatorTypes : public ::testing::Test {
 protected:
  static T Q(int v) { return static_cast<T>(std::is_signed_v<T> ? v : v + 128); }
  static std::vector<T> Qs(const std::vector<int>& v) {
    std::vector<T> out;
    for (int e : v) out.push_back(Q(e));
    return out;
  }
  static Tensor X(const Shape& shape, const std::vector<int>& v) { return Tensor::FromVector<T>(shape, Qs(v)); }
  static Tensor I64(const std::vector<int64_t>& v) {
    return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
  }
  // Output `i` of `out` has `shape` and the bytes Qs(v).
  static void Expect(const Result<std::vector<Value>>& out, const Shape& shape, const std::vector<int>& v, int i = 0) {
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    EXPECT_TRUE(TensorsEqual(X(shape, v), (*out)[i].tensor()));
  }
};

using EightBitTypes = ::testing::Types<uint8_t, int8_t>;
TYPED_TEST_SUITE(QOperatorTypes, EightBitTypes);

TYPED_TEST(QOperatorTypes, MaxPoolPadsWithTheLowestValueNotZero) {
  OpTest test("MaxPool", 12);
  test.Input(this->X({1, 1, 2, 2}, {-100, -50, -120, -90}));
  test.Attr("kernel_shape", std::vector<int64_t>{2, 2}).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
  this->Expect(test.Run(RegisterAllKernels), {1, 1, 3, 3}, {-100, -50, -50, -100, -50, -50, -120, -90, -90});
}

TYPED_TEST(QOperatorTypes, ResizeNearestAndLinear) {
  for (const char* mode : {"nearest", "linear"}) {
    OpTest test("Resize", 13);
    test.Input(this->X({1, 1, 1, 2}, {-100, 100})).AbsentInput();
    test.Input(Tensor::FromVector<float>({4}, {1, 1, 1, 2})).Attr("mode", std::string(mode));
    // half_pixel: the outputs sit at -0.25 (clamped), 0.25, 0.75, 1.25 (clamped) of the input.
    const std::vector<int> want = std::string(mode) == "nearest" ? std::vector<int>{-100, -100, 100, 100}
                                                                  : std::vector<int>{-100, -50, 50, 100};
    this->Expect(test.Run(RegisterAllKernels), {1, 1, 1, 4}, want);
  }
}

TYPED_TEST(QOperatorTypes, PadConstantEdgeReflect) {
  {
    OpTest test("Pad", 13);
    test.Input(this->X({2}, {-7, 9})).Input(this->I64({1, 2})).Input(this->X({}, {0}));
    this->Expect(test.Run(RegisterAllKernels), {5}, {0, -7, 9, 0, 0});
  }
  {
    OpTest test("Pad", 13);
    test.Input(this->X({2}, {-7, 9})).Input(this->I64({1, 2})).Attr("mode", std::string("edge"));
    this->Expect(test.Run(RegisterAllKernels), {5}, {-7, -7, 9, 9, 9});
  }
  {
    OpTest test("Pad", 13);
    test.Input(this->X({3}, {-7, 9, 100})).Input(this->I64({1, 1})).Attr("mode", std::string("reflect"));
    this->Expect(test.Run(RegisterAllKernels), {5}, {9, -7, 9, 100, 9});
  }
}

TYPED_TEST(QOperatorTypes, Split) {
  OpTest test("Split", 13);
  test.Input(this->X({5}, {-128, -1, 0, 1, 127})).Input(this->I64({2, 3})).Outputs(2);
  auto out = test.Run(RegisterAllKernels);
  this->Expect(out, {2}, {-128, -1}, 0);
  this->Expect(out, {3}, {0, 1, 127}, 1);
}

TYPED_TEST(QOperatorTypes, Transpose) {
  OpTest test("Transpose", 13);
  test.Input(this->X({2, 3}, {-128, -1, 0, 1, 2, 127})).Attr("perm", std::vector<int64_t>{1, 0});
  this->Expect(test.Run(RegisterAllKernels), {3, 2}, {-128, 1, -1, 2, 0, 127});
}

TYPED_TEST(QOperatorTypes, ReshapeFlattenSqueezeUnsqueeze) {
  const std::vector<int> v = {-128, -1, 0, 1, 2, 127};
  {
    OpTest test("Reshape", 14);
    test.Input(this->X({2, 3}, v)).Input(this->I64({3, -1}));
    this->Expect(test.Run(RegisterAllKernels), {3, 2}, v);
  }
  {
    OpTest test("Flatten", 13);
    test.Input(this->X({2, 1, 3}, v)).Attr("axis", int64_t{1});
    this->Expect(test.Run(RegisterAllKernels), {2, 3}, v);
  }
  {
    OpTest test("Squeeze", 13);
    test.Input(this->X({1, 6}, v)).Input(this->I64({0}));
    this->Expect(test.Run(RegisterAllKernels), {6}, v);
  }
  {
    OpTest test("Unsqueeze", 13);
    test.Input(this->X({6}, v)).Input(this->I64({0, 2}));
    this->Expect(test.Run(RegisterAllKernels), {1, 6, 1}, v);
  }
}

TYPED_TEST(QOperatorTypes, GatherAndSlice) {
  {
    OpTest test("Gather", 13);
    test.Input(this->X({3, 2}, {-128, -1, 0, 1, 2, 127})).Input(this->I64({2, 0}));
    this->Expect(test.Run(RegisterAllKernels), {2, 2}, {2, 127, -128, -1});
  }
  {
    OpTest test("Slice", 13);
    test.Input(this->X({5}, {-128, -1, 0, 1, 127})).Input(this->I64({1})).Input(this->I64({5}));
    test.Input(this->I64({0})).Input(this->I64({2}));
    this->Expect(test.Run(RegisterAllKernels), {2}, {-1, 1});
  }
}

TYPED_TEST(QOperatorTypes, ArgMaxComparesAsTheType) {
  // As uint8 bytes, int8's -100 (0x9C) would beat 100 (0x64); the right order says index 1.
  OpTest test("ArgMax", 13);
  test.Input(this->X({2, 3}, {-100, 100, 5, -128, 127, 0})).Attr("axis", int64_t{1}).Attr("keepdims", int64_t{0});
  auto out = test.Run(RegisterAllKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2}, {1, 1}), (*out)[0].tensor()));
}

TYPED_TEST(QOperatorTypes, Concat) {
  OpTest test("Concat", 13);
  test.Input(this->X({1, 2}, {-128, 127})).Input(this->X({1, 1}, {-1})).Attr("axis", int64_t{1});
  this->Expect(test.Run(RegisterAllKernels), {1, 3}, {-128, 127, -1});
}

TYPED_TEST(QOperatorTypes, DepthToSpaceAndBack) {
  // [1, 4, 1, 2] with x[c][w] = 10c + w - 40; DCR: out[bh][2w + bw] = x[2bh + bw][w].
  const std::vector<int> deep = {-40, -39, -30, -29, -20, -19, -10, -9};
  const std::vector<int> wide = {-40, -30, -39, -29, -20, -10, -19, -9};
  {
    OpTest test("DepthToSpace", 13);
    test.Input(this->X({1, 4, 1, 2}, deep)).Attr("blocksize", int64_t{2});
    this->Expect(test.Run(RegisterAllKernels), {1, 1, 2, 4}, wide);
  }
  {
    OpTest test("SpaceToDepth", 13);
    test.Input(this->X({1, 1, 2, 4}, wide)).Attr("blocksize", int64_t{2});
    this->Expect(test.Run(RegisterAllKernels), {1, 4, 1, 2}, deep);
  }
}

TYPED_TEST(QOperatorTypes, TileAndExpand) {
  {
    OpTest test("Tile", 13);
    test.Input(this->X({2}, {-128, 127})).Input(this->I64({2}));
    this->Expect(test.Run(RegisterAllKernels), {4}, {-128, 127, -128, 127});
  }
  {
    OpTest test("Expand", 13);
    test.Input(this->X({2, 1}, {-5, 6})).Input(this->I64({2, 3}));
    this->Expect(test.Run(RegisterAllKernels), {2, 3}, {-5, -5, -5, 6, 6, 6});
  }
}

// Shapes big enough for the kernels' vector and tiled paths, against index arithmetic.
TYPED_TEST(QOperatorTypes, LargerShapesAgainstIndexing) {
  const int64_t c = 3, h = 17, w = 19;
  std::vector<int> v(c * h * w);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int>((i * 37 + 11) % 256) - 128;
  {
    // NCHW -> NHWC, the edge of a channels-last region.
    OpTest test("Transpose", 13);
    test.Input(this->X({1, c, h, w}, v)).Attr("perm", std::vector<int64_t>{0, 2, 3, 1});
    std::vector<int> want;
    for (int64_t y = 0; y < h; ++y)
      for (int64_t x = 0; x < w; ++x)
        for (int64_t k = 0; k < c; ++k) want.push_back(v[(k * h + y) * w + x]);
    this->Expect(test.Run(RegisterAllKernels), {1, h, w, c}, want);
  }
  {
    // 3x3 windows, stride 2, pads 1: out 9 x 10.
    OpTest test("MaxPool", 12);
    test.Input(this->X({1, c, h, w}, v)).Attr("kernel_shape", std::vector<int64_t>{3, 3});
    test.Attr("strides", std::vector<int64_t>{2, 2}).Attr("pads", std::vector<int64_t>{1, 1, 1, 1});
    const int64_t oh = 9, ow = 10;
    std::vector<int> want;
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < oh; ++y)
        for (int64_t x = 0; x < ow; ++x) {
          int m = -1000;
          for (int64_t dy = -1; dy <= 1; ++dy)
            for (int64_t dx = -1; dx <= 1; ++dx) {
              const int64_t iy = 2 * y + dy, ix = 2 * x + dx;
              if (iy >= 0 && iy < h && ix >= 0 && ix < w) m = std::max(m, v[(k * h + iy) * w + ix]);
            }
          want.push_back(m);
        }
    this->Expect(test.Run(RegisterAllKernels), {1, c, oh, ow}, want);
  }
  {
    // Nearest 2x upsampling (asymmetric, floor): out[y][x] = in[y / 2][x / 2].
    OpTest test("Resize", 13);
    test.Input(this->X({1, c, h, w}, v)).AbsentInput().Input(Tensor::FromVector<float>({4}, {1, 1, 2, 2}));
    test.Attr("coordinate_transformation_mode", std::string("asymmetric")).Attr("nearest_mode", std::string("floor"));
    std::vector<int> want;
    for (int64_t k = 0; k < c; ++k)
      for (int64_t y = 0; y < 2 * h; ++y)
        for (int64_t x = 0; x < 2 * w; ++x) want.push_back(v[(k * h + y / 2) * w + x / 2]);
    this->Expect(test.Run(RegisterAllKernels), {1, c, 2 * h, 2 * w}, want);
  }
}

}  // namespace
}  // namespace onnxflow
