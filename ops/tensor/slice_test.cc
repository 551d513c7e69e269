#include <algorithm>
#include <array>
#include <climits>

#include <gtest/gtest.h>

#include "ops/framework/shape.h"
#include "ops/tensor/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace tensor_test {
namespace {

// The indices one axis takes, by the spec's clamping rules (start to [0, dim-1] and end to
// [-1, dim-1] when stepping backwards, which differs from Python for starts below -dim), then
// enumerated step by step.
std::vector<int64_t> PythonSlice(int64_t start, int64_t end, int64_t step, int64_t dim) {
  std::vector<int64_t> out;
  if (dim == 0) return out;
  auto fix = [&](int64_t v, bool is_start) {
    if (v < 0) v += dim;
    if (step > 0) return std::clamp<int64_t>(v, 0, dim);
    return std::clamp<int64_t>(v, is_start ? 0 : -1, dim - 1);
  };
  const int64_t s = fix(start, true), e = fix(end, false);
  if (step > 0) {
    for (int64_t i = s; i < e; i += step) out.push_back(i);
  } else {
    for (int64_t i = s; i > e; i += step) {
      if (i >= 0 && i < dim) out.push_back(i);
    }
  }
  return out;
}

template <typename T>
Tensor ReferenceSlice(const Tensor& x, const std::vector<std::vector<int64_t>>& taken) {
  Shape shape;
  for (const auto& t : taken) shape.push_back(static_cast<int64_t>(t.size()));
  Tensor y(x.dtype(), shape);
  const std::vector<int64_t> strides = Strides(x.shape());
  const int64_t rank = x.rank();
  for (int64_t o = 0; o < y.size(); ++o) {
    int64_t rest = o, src = 0;
    for (int64_t d = rank - 1; d >= 0; --d) {
      src += taken[d][rest % shape[d]] * strides[d];
      rest /= shape[d];
    }
    y.mutable_data<T>()[o] = x.data<T>()[src];
  }
  return y;
}

TEST(Slice, MatchesPythonSlicingOverManyBounds) {
  const Tensor x = Iota<float>({5, 4, 6});
  const std::vector<std::array<int64_t, 3>> specs = {
      {0, 5, 1}, {1, -1, 2}, {-1, -100, -1}, {100, -100, -2}, {-3, 100, 3}, {4, 0, -1}, {2, 2, 1}, {0, INT64_MAX, 1},
      {INT64_MIN, INT64_MAX, 4}, {INT64_MAX, INT64_MIN, -3}};
  for (const auto& a : specs) {
    for (const auto& b : specs) {
      // axis 0 gets spec a, axis 2 gets spec b (axis given negative), axis 1 untouched.
      OpTest test("Slice", 13);
      test.Input(x)
          .Input(I64({a[0], b[0]}))
          .Input(I64({a[1], b[1]}))
          .Input(I64({0, -1}))
          .Input(I64({a[2], b[2]}));
      const std::vector<std::vector<int64_t>> taken = {PythonSlice(a[0], a[1], a[2], 5), {0, 1, 2, 3},
                                                       PythonSlice(b[0], b[1], b[2], 6)};
      EXPECT_TRUE(Same(ReferenceSlice<float>(x, taken), Out(test)))
          << "a=" << a[0] << ":" << a[1] << ":" << a[2] << " b=" << b[0] << ":" << b[1] << ":" << b[2];
    }
  }
}

template <typename T>
class SliceTyped : public ::testing::Test {};
TYPED_TEST_SUITE(SliceTyped, AllTypes);

TYPED_TEST(SliceTyped, EveryTypeWithNegativeStep) {
  const Tensor x = Iota<TypeParam>({3, 4});
  OpTest test("Slice", 13);
  test.Input(x).Input(I64({-1})).Input(I64({-5})).Input(I64({1})).Input(I64({-2}));
  EXPECT_TRUE(Same(ReferenceSlice<TypeParam>(x, {{0, 1, 2}, {3, 1}}), Out(test)));
}

// A short run of the last axis cut from each row, the leading dims whole (rows at a fixed step),
// on one and two threads; and near misses that take the general path: a leading dim cut, a step
// of 2 on the last axis, a run of 65.
TEST(Slice, ShortRunsOfTheLastAxis) {
  const Tensor x = Iota<float>({2, 2210, 70});
  struct Case { std::vector<int64_t> starts, ends, axes, steps; };
  const std::vector<Case> cases = {
      {{0}, {2}, {2}, {1}},      {{2}, {4}, {2}, {1}},       {{3}, {INT64_MAX}, {2}, {1}},
      {{1, 5}, {2, 9}, {0, 2}, {1, 1}}, {{0}, {8}, {2}, {2}},  {{0}, {65}, {2}, {1}}};
  for (const Case& c : cases) {
    std::vector<std::vector<int64_t>> taken = {{0, 1}, {}, {}};
    for (int64_t i = 0; i < 2210; ++i) taken[1].push_back(i);
    for (int64_t i = 0; i < 70; ++i) taken[2].push_back(i);
    for (size_t k = 0; k < c.axes.size(); ++k) {
      taken[c.axes[k]] = PythonSlice(c.starts[k], c.ends[k], c.steps[k], x.dim(c.axes[k]));
    }
    for (int threads : {1, 2}) {
      OpTest test("Slice", 13);
      test.Input(x).Input(I64(c.starts)).Input(I64(c.ends)).Input(I64(c.axes)).Input(I64(c.steps)).Threads(threads);
      EXPECT_TRUE(Same(ReferenceSlice<float>(x, taken), Out(test))) << "starts " << c.starts[0] << " threads " << threads;
    }
  }
}

TEST(Slice, DefaultAxesStepsAndWholeInputIsShared) {
  const Tensor x = Iota<int32_t>({3, 4});
  OpTest test("Slice", 13);
  test.Input(x).Input(I64({0, 1})).Input(I64({2, 3}));
  EXPECT_TRUE(Same(ReferenceSlice<int32_t>(x, {{0, 1}, {1, 2}}), Out(test)));

  OpTest whole("Slice", 13);
  whole.Input(x).Input(I64({0})).Input(I64({INT64_MAX}));
  EXPECT_TRUE(Out(whole).SharesStorageWith(x));
}

TEST(Slice, Opset1Attributes) {
  const Tensor x = Iota<float>({3, 4});
  OpTest test("Slice", 1);
  test.Input(x)
      .Attr("starts", std::vector<int64_t>{1})
      .Attr("ends", std::vector<int64_t>{1000})
      .Attr("axes", std::vector<int64_t>{1});
  EXPECT_TRUE(Same(ReferenceSlice<float>(x, {{0, 1, 2}, {1, 2, 3}}), Out(test)));
}

TEST(Slice, ZeroSizeAndErrors) {
  OpTest empty("Slice", 13);
  empty.Input(Iota<float>({0, 3})).Input(I64({0})).Input(I64({2})).Input(I64({1}));
  EXPECT_EQ(Out(empty).shape(), (Shape{0, 2}));

  OpTest empty_neg("Slice", 13);
  empty_neg.Input(Iota<float>({0, 3})).Input(I64({-1})).Input(I64({-10})).Input(I64({0})).Input(I64({-1}));
  EXPECT_EQ(Out(empty_neg).shape(), (Shape{0, 3}));

  OpTest zero_step("Slice", 13);
  zero_step.Input(Iota<float>({4})).Input(I64({0})).Input(I64({4})).Input(I64({0})).Input(I64({0}));
  EXPECT_EQ(RunOp(zero_step).status().code(), StatusCode::kInvalidArgument);

  OpTest dup_axes("Slice", 13);
  dup_axes.Input(Iota<float>({4})).Input(I64({0, 0})).Input(I64({4, 4})).Input(I64({0, -1}));
  EXPECT_TRUE(Refused(RunOp(dup_axes), StatusCode::kInvalidArgument, "Slice axes: axis -1 appears more than once"));

  OpTest bad_axis("Slice", 13);
  bad_axis.Input(Iota<float>({4})).Input(I64({0})).Input(I64({4})).Input(I64({1}));
  EXPECT_TRUE(Refused(RunOp(bad_axis), StatusCode::kInvalidArgument, "Slice axes: axis 1 is out of range for rank 1"));

  OpTest lengths("Slice", 13);
  lengths.Input(Iota<float>({4})).Input(I64({0, 1})).Input(I64({4}));
  EXPECT_TRUE(Refused(RunOp(lengths), StatusCode::kInvalidArgument, "starts has 2 entries but ends has 1"));
}

TEST(Slice, LargeInParallel) {
  const Tensor x = Iota<float>({300, 1000});
  OpTest test("Slice", 13);
  test.Input(x).Input(I64({1, 3})).Input(I64({299, 998})).Input(I64({0, 1})).Input(I64({1, 2})).Threads(2);
  const Tensor y = Out(test);
  ASSERT_EQ(y.shape(), (Shape{298, 498}));
  EXPECT_EQ(y.data<float>()[297 * 498 + 497], x.data<float>()[298 * 1000 + 997]);
}

}  // namespace
}  // namespace tensor_test
}  // namespace onnxflow
