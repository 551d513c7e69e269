#include "ops/reduce/reduce_ops.h"

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/framework/testing.h"
#include "ops/reduce/reduction.h"
#include "ops/reduce/register.h"

namespace onnxflow {
namespace {

Result<std::vector<Value>> RunReduce(const std::string& op, int opset, const Tensor& x, std::vector<int64_t> axes,
                                     int64_t keepdims = 1, int64_t noop = 0, bool axes_as_input = true) {
  OpTest t(op, opset);
  t.Input(x);
  if (axes_as_input) {
    if (!axes.empty()) t.Input(Tensor::FromVector<int64_t>({static_cast<int64_t>(axes.size())}, axes));
  } else if (!axes.empty()) {
    t.Attr("axes", axes);
  }
  t.Attr("keepdims", keepdims);
  if (noop) t.Attr("noop_with_empty_axes", noop);
  return t.Run(RegisterReduceOps);
}

// Plain reference: reduce `x` (row-major `shape`) over `axes` with a fold function, keepdims=1.
template <typename F>
std::vector<double> Reference(const std::vector<double>& x, const Shape& shape, const std::vector<int64_t>& axes,
                              double init, F fold, Shape* out_shape) {
  *out_shape = shape;
  for (int64_t a : axes) (*out_shape)[a] = 1;
  const std::vector<int64_t> in_strides = Strides(shape), out_strides = Strides(*out_shape);
  std::vector<double> out(ElementCount(*out_shape), init);
  for (int64_t i = 0; i < static_cast<int64_t>(x.size()); ++i) {
    int64_t rest = i, at = 0;
    for (size_t d = 0; d < shape.size(); ++d) {
      const int64_t c = rest / in_strides[d];
      rest %= in_strides[d];
      if ((*out_shape)[d] != 1) at += c * out_strides[d];
    }
    out[at] = fold(out[at], x[i]);
  }
  return out;
}

TEST(ReduceOps, SumMatchesReferenceForEveryAxisSet) {
  const Shape shape = {3, 1, 4, 5};
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> dist(-2, 2);
  std::vector<float> xv(ElementCount(shape));
  for (float& v : xv) v = dist(rng);
  const std::vector<double> xd(xv.begin(), xv.end());
  for (int mask = 1; mask < 16; ++mask) {
    std::vector<int64_t> axes;
    for (int d = 0; d < 4; ++d) if (mask & (1 << d)) axes.push_back(d);
    for (int threads : {1, 2}) {
      OpTest t("ReduceSum", 13);
      t.Input(Tensor::FromVector<float>(shape, xv)).Input(Tensor::FromVector<int64_t>({(int64_t)axes.size()}, axes));
      t.Threads(threads);
      auto out = t.Run(RegisterReduceOps);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      Shape ref_shape;
      auto ref = Reference(xd, shape, axes, 0.0, [](double a, double b) { return a + b; }, &ref_shape);
      std::vector<float> reff(ref.begin(), ref.end());
      EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>(ref_shape, reff), (*out)[0].tensor(), 1e-5, 1e-5))
          << "mask " << mask;
    }
  }
}

TEST(ReduceOps, LargeInnerBlocksAndGeneralPathMatchReference) {
  // inner > the 256-element block, and a non-contiguous axis set (0 and 2).
  const Shape shape = {2, 3, 5, 300};
  std::vector<float> xv(ElementCount(shape));
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = static_cast<float>((i * 7919) % 101) / 10.0f - 5.0f;
  const std::vector<double> xd(xv.begin(), xv.end());
  for (const std::vector<int64_t>& axes : {std::vector<int64_t>{1}, std::vector<int64_t>{0, 2}, std::vector<int64_t>{1, 3}}) {
    auto out = RunReduce("ReduceMax", 18, Tensor::FromVector<float>(shape, xv), axes);
    ASSERT_TRUE(out.ok()) << out.status().ToString();
    Shape ref_shape;
    auto ref = Reference(xd, shape, axes, -INFINITY, [](double a, double b) { return std::max(a, b); }, &ref_shape);
    std::vector<float> reff(ref.begin(), ref.end());
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>(ref_shape, reff), (*out)[0].tensor()));
  }
}

TEST(ReduceOps, LongRowsUseTheUnrolledFold) {
  const Shape shape = {3, 1003};
  std::vector<float> xv(3 * 1003);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = std::sin(i * 0.1f);
  for (const char* op : {"ReduceSum", "ReduceSumSquare", "ReduceMean"}) {
    auto out = RunReduce(op, 18, Tensor::FromVector<float>(shape, xv), {1}, 0);
    ASSERT_TRUE(out.ok());
    std::vector<float> ref(3);
    for (int r = 0; r < 3; ++r) {
      double s = 0;
      for (int i = 0; i < 1003; ++i) {
        const double v = xv[r * 1003 + i];
        s += std::string(op) == "ReduceSumSquare" ? v * v : v;
      }
      ref[r] = static_cast<float>(std::string(op) == "ReduceMean" ? s / 1003 : s);
    }
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3}, ref), (*out)[0].tensor(), 1e-6, 1e-7)) << op;
  }
}

TEST(ReduceOps, EachOpOnAnExample) {
  const Tensor x = Tensor::FromVector<float>({2, 2}, {1, -2, 3, 4});
  struct Case { const char* op; std::vector<float> expected; };
  const Case cases[] = {
      {"ReduceSum", {4, 2}},
      {"ReduceMean", {2, 1}},
      {"ReduceProd", {3, -8}},
      {"ReduceMax", {3, 4}},
      {"ReduceMin", {1, -2}},
      {"ReduceL1", {4, 6}},
      {"ReduceL2", {std::sqrt(10.f), std::sqrt(20.f)}},
      {"ReduceSumSquare", {10, 20}},
      {"ReduceLogSum", {std::log(4.f), std::log(2.f)}},
      {"ReduceLogSumExp", {std::log(std::exp(1.f) + std::exp(3.f)), std::log(std::exp(-2.f) + std::exp(4.f))}},
  };
  for (const Case& c : cases) {
    auto out = RunReduce(c.op, 18, x, {0}, 0);
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status().ToString();
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2}, c.expected), (*out)[0].tensor())) << c.op;
  }
}

TEST(ReduceOps, AxesAttributeBeforeVersion18) {
  const Tensor x = Tensor::FromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto out = RunReduce("ReduceMean", 13, x, {1}, 1, 0, /*axes_as_input=*/false);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 1}, {2, 5}), (*out)[0].tensor()));
  // ReduceSum takes axes as an input from 13.
  auto sum = RunReduce("ReduceSum", 13, x, {-1}, 0);
  ASSERT_TRUE(sum.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2}, {6, 15}), (*sum)[0].tensor()));
  auto sum11 = RunReduce("ReduceSum", 11, x, {0}, 0, 0, false);
  ASSERT_TRUE(sum11.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({3}, {5, 7, 9}), (*sum11)[0].tensor()));
}

TEST(ReduceOps, EmptyAxesReduceAllOrNothing) {
  const Tensor x = Tensor::FromVector<float>({2, 2}, {1, -2, 3, 4});
  auto all = RunReduce("ReduceSum", 13, x, {}, 1);
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({1, 1}, {6}), (*all)[0].tensor()));
  // noop: no axis is reduced; ReduceSumSquare still squares each element, ReduceL1 takes |x|.
  auto noop = RunReduce("ReduceSumSquare", 18, x, {}, 1, 1);
  ASSERT_TRUE(noop.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 2}, {1, 4, 9, 16}), (*noop)[0].tensor()));
  auto l1 = RunReduce("ReduceL1", 18, x, {}, 0, 1);
  ASSERT_TRUE(l1.ok());
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4}), (*l1)[0].tensor()));
}

TEST(ReduceOps, EmptySetGivesIdentity) {
  const Tensor x(DataType::kFloat, {2, 0, 4});
  struct Case { const char* op; float identity; };
  for (const Case& c : {Case{"ReduceSum", 0.f}, Case{"ReduceProd", 1.f}, Case{"ReduceMax", -INFINITY},
                        Case{"ReduceMin", INFINITY}, Case{"ReduceL2", 0.f}, Case{"ReduceLogSum", -INFINITY},
                        Case{"ReduceLogSumExp", -INFINITY}, Case{"ReduceSumSquare", 0.f}}) {
    auto out = RunReduce(c.op, 18, x, {1}, 1);
    ASSERT_TRUE(out.ok()) << c.op;
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 1, 4}, std::vector<float>(8, c.identity)), (*out)[0].tensor()))
        << c.op;
  }
  // An empty kept dim gives an empty output.
  auto out = RunReduce("ReduceSum", 13, Tensor(DataType::kFloat, {0, 3}), {1}, 1);
  ASSERT_TRUE(out.ok());
  EXPECT_EQ((*out)[0].tensor().shape(), (Shape{0, 1}));
}

TEST(ReduceOps, EveryType) {
  auto check = [](auto tag) {
    using T = decltype(tag);
    std::vector<T> v;
    for (int i = 1; i <= 6; ++i) v.push_back(FromCompute<T>(static_cast<ComputeType<T>>(i)));
    const Tensor x = Tensor::FromVector<T>({2, 3}, v);
    auto sum = RunReduce("ReduceSum", 13, x, {1}, 0);
    ASSERT_TRUE(sum.ok()) << sum.status().ToString();
    const std::vector<T> expected = {FromCompute<T>(static_cast<ComputeType<T>>(6)),
                                     FromCompute<T>(static_cast<ComputeType<T>>(15))};
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<T>({2}, expected), (*sum)[0].tensor())) << DataTypeName(x.dtype());
    auto max = RunReduce("ReduceMax", 18, x, {0}, 0);
    ASSERT_TRUE(max.ok());
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<T>({3}, {v[3], v[4], v[5]}), (*max)[0].tensor()));
  };
  check(float{}); check(double{}); check(Float16{}); check(BFloat16{});
  check(int8_t{}); check(uint8_t{}); check(int16_t{}); check(uint16_t{});
  check(int32_t{}); check(int64_t{}); check(uint32_t{}); check(uint64_t{});
}

TEST(ReduceOps, BoolMaxMinAndIntegerMean) {
  const Tensor b = Tensor::FromVector<bool>({2, 2}, {true, false, false, false});
  auto max = RunReduce("ReduceMax", 20, b, {1}, 0);
  ASSERT_TRUE(max.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<bool>({2}, {true, false}), (*max)[0].tensor()));
  auto min = RunReduce("ReduceMin", 20, b, {0}, 0);
  ASSERT_TRUE(min.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<bool>({2}, {false, false}), (*min)[0].tensor()));
  auto mean = RunReduce("ReduceMean", 18, Tensor::FromVector<int32_t>({3}, {1, 2, 4}), {0}, 0);
  ASSERT_TRUE(mean.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::Scalar<int32_t>(2), (*mean)[0].tensor()));
}

// Long float rows: LogSumExp's SIMD fold (chunks of exp sums) against double, with +inf, all
// -inf and NaN rows; whole tensors folded in parts over the cores give the same bits on 1 and 2
// threads, and a NaN in a later part still wins ReduceMax.
TEST(ReduceOps, LongRowsFoldInSimdAndInParts) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> dist(-20, 20);
  const int64_t n = 3000;
  std::vector<float> x(5 * n);
  for (auto& v : x) v = dist(rng);
  for (int64_t j = 0; j < n; ++j) x[2 * n + j] = -INFINITY;
  x[3 * n + 17] = INFINITY;
  x[4 * n + 2999] = NAN;
  auto out = RunReduce("ReduceLogSumExp", 18, Tensor::FromVector<float>({5, n}, x), {1}, 0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const float* y = (*out)[0].tensor().data<float>();
  for (int64_t r = 0; r < 2; ++r) {
    double m = -INFINITY, s = 0;
    for (int64_t j = 0; j < n; ++j) m = std::max(m, double(x[r * n + j]));
    for (int64_t j = 0; j < n; ++j) s += std::exp(double(x[r * n + j]) - m);
    EXPECT_NEAR(y[r], m + std::log(s), 1e-5 * std::abs(m + std::log(s))) << "row " << r;
  }
  EXPECT_EQ(y[2], -INFINITY);
  EXPECT_EQ(y[3], INFINITY);
  EXPECT_TRUE(std::isnan(y[4]));

  const int64_t big = 300001;  // 5 parts, the last short
  std::vector<float> z(big);
  double sum = 0;
  for (auto& v : z) sum += (v = dist(rng));
  float one_thread = 0;
  for (int threads : {1, 2}) {
    OpTest t("ReduceSum", 13);
    t.Input(Tensor::FromVector<float>({big}, z)).Attr("keepdims", int64_t{0}).Threads(threads);
    auto r = t.Run(RegisterReduceOps);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    const float got = (*r)[0].tensor().data<float>()[0];
    EXPECT_NEAR(got, sum, 1e-3);
    if (threads == 1) one_thread = got;
    else EXPECT_EQ(got, one_thread);
  }
  // L2 and LogSum fold the same parts (of squares, of the values): within double rounding of a plain loop.
  double squares = 0, positive = 0;
  std::vector<float> p(big);
  for (int64_t i = 0; i < big; ++i) squares += double(z[i]) * z[i], positive += (p[i] = std::abs(z[i]));
  auto l2 = RunReduce("ReduceL2", 18, Tensor::FromVector<float>({big}, z), {}, 0);
  auto log_sum = RunReduce("ReduceLogSum", 18, Tensor::FromVector<float>({big}, p), {}, 0);
  ASSERT_TRUE(l2.ok() && log_sum.ok());
  EXPECT_FLOAT_EQ((*l2)[0].tensor().data<float>()[0], static_cast<float>(std::sqrt(squares)));
  EXPECT_FLOAT_EQ((*log_sum)[0].tensor().data<float>()[0], static_cast<float>(std::log(positive)));
  z[big - 1] = NAN;
  auto mx = RunReduce("ReduceMax", 18, Tensor::FromVector<float>({big}, z), {}, 0);
  ASSERT_TRUE(mx.ok()) << mx.status().ToString();
  EXPECT_TRUE(std::isnan((*mx)[0].tensor().data<float>()[0]));
}

TEST(ReduceOps, LogSumExpIsStableForLargeInputs) {
  auto out = RunReduce("ReduceLogSumExp", 18, Tensor::FromVector<float>({2}, {1000, 1000}), {0}, 0);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(Tensor::Scalar<float>(1000 + std::log(2.f)), (*out)[0].tensor()));
}

TEST(ReduceOps, MaxPropagatesNan) {
  auto out = RunReduce("ReduceMax", 18, Tensor::FromVector<float>({3}, {1, NAN, 2}), {0}, 0);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(std::isnan((*out)[0].tensor().data<float>()[0]));
}

TEST(ReduceOps, Errors) {
  const Tensor x = Tensor::FromVector<float>({2, 2}, {1, 2, 3, 4});
  EXPECT_TRUE(Refused(RunReduce("ReduceSum", 13, x, {2}), StatusCode::kInvalidArgument, "axis 2 is out of range for rank 2"));       // axis out of range
  EXPECT_TRUE(Refused(RunReduce("ReduceSum", 13, x, {1, -1}), StatusCode::kInvalidArgument, "axis -1 appears twice in axes"));   // repeated axis
  EXPECT_TRUE(Refused(RunReduce("ReduceMean", 18, x, {-3}), StatusCode::kInvalidArgument, "axis -3 is out of range for rank 2"));
  OpTest t("ReduceSum", 13);
  t.Input(x).Input(Tensor::FromVector<float>({1}, {0}));  // axes of the wrong type
  EXPECT_TRUE(Refused(t.Run(RegisterReduceOps), StatusCode::kInvalidArgument, "input 'axes' must be int64, got float32"));
  EXPECT_TRUE(Refused(RunReduce("ReduceSum", 13, Tensor::FromVector<bool>({1}, {true}), {0}), StatusCode::kUnimplemented, "type bool is not supported here"));
}

TEST(ReductionPlan, MergesDimsAndFindsTheBlock) {
  auto plan = PlanReduction({2, 3, 4, 5}, {1, 2}, true);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->contiguous_block);
  EXPECT_EQ(plan->outer, 2);
  EXPECT_EQ(plan->reduced_count, 12);
  EXPECT_EQ(plan->inner, 5);
  EXPECT_EQ(plan->output_shape, (Shape{2, 1, 1, 5}));
  auto general = PlanReduction({2, 3, 4}, {0, 2}, false);
  ASSERT_TRUE(general.ok());
  EXPECT_FALSE(general->contiguous_block);
  EXPECT_EQ(general->output_shape, (Shape{3}));
  EXPECT_EQ(general->kept_offsets, (std::vector<int64_t>{0, 4, 8}));
  EXPECT_EQ(general->reduced_offsets, (std::vector<int64_t>{0, 1, 2, 3, 12, 13, 14, 15}));
}

}  // namespace
}  // namespace onnxflow
