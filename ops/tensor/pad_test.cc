#include <gtest/gtest.h>

#include "ops/framework/shape.h"
#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

// numpy.pad-style reference for one index: where output index o along an axis of size n reads
// from (after cropping by negative pads), or -1 for the constant.
int64_t ReferenceSource(int64_t o, int64_t n_in, int64_t before, int64_t after, const std::string& mode) {
  const int64_t lo = before < 0 ? -before : 0;
  const int64_t n = n_in - lo - (after < 0 ? -after : 0);
  int64_t i = o - (before > 0 ? before : 0);
  if (i >= 0 && i < n) return lo + i;
  if (mode == "constant") return -1;
  if (mode == "edge") return lo + (i < 0 ? 0 : n - 1);
  if (mode == "wrap") {
    while (i < 0) i += n;
    return lo + i % n;
  }
  // reflect: bounce between the ends until inside.
  while (i < 0 || i >= n) {
    if (n == 1) return lo;
    if (i < 0) i = -i;
    if (i >= n) i = 2 * (n - 1) - i;
  }
  return lo + i;
}

Tensor ReferencePad(const Tensor& x, const std::vector<int64_t>& pads, const std::string& mode, float value) {
  const int64_t rank = x.rank();
  Shape shape(rank);
  for (int64_t d = 0; d < rank; ++d) shape[d] = x.dim(d) + pads[d] + pads[rank + d];
  Tensor y(DataType::kFloat, shape);
  const std::vector<int64_t> strides = Strides(x.shape());
  for (int64_t o = 0; o < y.size(); ++o) {
    int64_t rest = o, src = 0;
    bool constant = false;
    for (int64_t d = rank - 1; d >= 0; --d) {
      const int64_t i = ReferenceSource(rest % shape[d], x.dim(d), pads[d], pads[rank + d], mode);
      rest /= shape[d];
      if (i < 0) constant = true;
      src += i * strides[d];
    }
    y.mutable_data<float>()[o] = constant ? value : x.data<float>()[src];
  }
  return y;
}

TEST(Pad, AllModesAgainstReference) {
  const Tensor x = Iota<float>({3, 4});
  const std::vector<std::vector<int64_t>> pad_sets = {
      {0, 0, 0, 0}, {1, 2, 1, 2}, {2, 3, 2, 3}, {0, 7, 0, 9}, {-1, 1, -1, 2}, {1, -2, 0, -1}, {5, 0, 0, 0}};
  for (const std::string mode : {"constant", "reflect", "edge", "wrap"}) {
    for (const auto& pads : pad_sets) {
      OpTest test("Pad", 19);
      test.Input(x).Input(I64(pads)).Input(Tensor::Scalar<float>(-1.5f)).Attr("mode", mode);
      EXPECT_TRUE(Same(ReferencePad(x, pads, mode, -1.5f), Out(test))) << mode << " " << ShapeToString(pads);
    }
  }
}

TEST(Pad, AxesInputOpset2AttributesAndDefaults) {
  const Tensor x = Iota<float>({2, 3});
  OpTest axes("Pad", 18);
  axes.Input(x).Input(I64({1, 2})).AbsentInput().Input(I64({-1}));
  EXPECT_TRUE(Same(ReferencePad(x, {0, 1, 0, 2}, "constant", 0), Out(axes)));

  OpTest old("Pad", 2);
  old.Input(x).Attr("pads", std::vector<int64_t>{1, 0, 0, 1}).Attr("value", 3.0f);
  EXPECT_TRUE(Same(ReferencePad(x, {1, 0, 0, 1}, "constant", 3), Out(old)));

  OpTest oldest("Pad", 1);
  oldest.Input(x).Attr("paddings", std::vector<int64_t>{0, 1, 0, 0}).Attr("mode", std::string("edge"));
  EXPECT_TRUE(Same(ReferencePad(x, {0, 1, 0, 0}, "edge", 0), Out(oldest)));
}

template <typename T>
class PadTyped : public ::testing::Test {};
TYPED_TEST_SUITE(PadTyped, AllTypes);

TYPED_TEST(PadTyped, EdgeModeMovesEveryType) {
  const Tensor x = Iota<TypeParam>({2});
  OpTest test("Pad", 19);
  test.Input(x).Input(I64({1, 2})).Attr("mode", std::string("edge"));
  const Tensor y = Out(test);
  Tensor expected(x.dtype(), {5});
  const int64_t src[5] = {0, 0, 1, 1, 1};
  for (int64_t i = 0; i < 5; ++i) expected.mutable_data<TypeParam>()[i] = x.data<TypeParam>()[src[i]];
  EXPECT_TRUE(Same(expected, y));
}

TEST(Pad, ErrorsAndLargeParallel) {
  OpTest count("Pad", 19);
  count.Input(Iota<float>({2, 3})).Input(I64({1, 1}));
  EXPECT_EQ(RunOp(count).status().code(), StatusCode::kInvalidArgument);

  OpTest negative("Pad", 19);
  negative.Input(Iota<float>({2, 3})).Input(I64({0, -4, 0, 0}));
  EXPECT_TRUE(Refused(RunOp(negative), StatusCode::kInvalidArgument, "pads -4, 0 on axis 1 of size 3 leave a negative size"));

  OpTest empty_reflect("Pad", 19);
  empty_reflect.Input(Iota<float>({0, 3})).Input(I64({1, 0, 0, 0})).Attr("mode", std::string("reflect"));
  EXPECT_TRUE(Refused(RunOp(empty_reflect), StatusCode::kInvalidArgument, "cannot pad axis 0 of size 0 in a non-constant mode"));

  OpTest huge("Pad", 19);
  huge.Input(Iota<float>({2, 3})).Input(I64({0, INT64_MAX, 0, 0}));
  EXPECT_TRUE(Refused(RunOp(huge), StatusCode::kInvalidArgument, "pads on axis 1 are out of range"));
  OpTest huge_negative("Pad", 19);
  huge_negative.Input(Iota<float>({2, 3})).Input(I64({0, INT64_MIN, 0, 0}));
  EXPECT_TRUE(Refused(RunOp(huge_negative), StatusCode::kInvalidArgument, "pads on axis 1 are out of range"));
  OpTest huge_both("Pad", 19);
  huge_both.Input(Iota<float>({2, 3})).Input(I64({int64_t{1} << 40, 0, int64_t{1} << 40, 0}));
  EXPECT_EQ(RunOp(huge_both).status().code(), StatusCode::kResourceExhausted);

  const Tensor big = Iota<float>({3, 200, 300});
  OpTest par("Pad", 19);
  par.Input(big).Input(I64({0, 2, 3, 0, 1, 4})).Attr("mode", std::string("reflect")).Threads(2);
  EXPECT_TRUE(Same(ReferencePad(big, {0, 2, 3, 0, 1, 4}, "reflect", 0), Out(par)));
}

TEST(CenterCropPad, CropsAndPadsAroundTheCentre) {
  const Tensor x = Iota<float>({5, 4});
  OpTest test("CenterCropPad", 18);
  test.Input(x).Input(I64({2, 7}));
  // Rows: crop 5 -> 2 starts at 1 (floor(3/2)); cols: pad 4 -> 7 puts 1 before, 2 after.
  EXPECT_TRUE(Same(ReferencePad(x, {-1, 1, -2, 2}, "constant", 0), Out(test)));

  OpTest axes("CenterCropPad", 18);
  axes.Input(Iota<float>({3, 4, 2})).Input(I64({2})).Attr("axes", std::vector<int64_t>{-2});
  EXPECT_TRUE(Same(ReferencePad(Iota<float>({3, 4, 2}), {0, -1, 0, 0, -1, 0}, "constant", 0), Out(axes)));

  OpTest bad("CenterCropPad", 18);
  bad.Input(x).Input(I64({2}));
  EXPECT_TRUE(Refused(RunOp(bad), StatusCode::kInvalidArgument, "input 'shape' has 1 entries for 2 axes"));
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
