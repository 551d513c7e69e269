// Tests for ArgMax/ArgMin, TopK, CumSum/CumProd.
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/reduce/arg_min_max.h"
#include "ops/reduce/register.h"

namespace onnxflow {
namespace {

Result<std::vector<Value>> Arg(const char* op, const Tensor& x, int64_t axis, int64_t keepdims, int64_t last) {
  OpTest t(op, 13);
  t.Input(x).Attr("axis", axis).Attr("keepdims", keepdims).Attr("select_last_index", last);
  return t.Run(RegisterReduceKernels);
}

TEST(ArgMinMax, FirstOrLastIndexOfTies) {
  const Tensor x = Tensor::FromVector<float>({2, 3}, {2, 5, 5, 1, 1, 0});
  auto a = Arg("ArgMax", x, 1, 1, 0);
  ASSERT_TRUE(a.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2, 1}, {1, 0}), (*a)[0].tensor()));
  auto b = Arg("ArgMax", x, -1, 0, 1);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2}, {2, 1}), (*b)[0].tensor()));
  auto c = Arg("ArgMin", x, 0, 0, 0);
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({3}, {1, 1, 1}), (*c)[0].tensor()));
  auto d = Arg("ArgMin", x, 1, 0, 1);
  ASSERT_TRUE(d.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2}, {0, 2}), (*d)[0].tensor()));
}

// Float rows along the last axis run on SIMD passes (extreme, then where it sits): against the
// element loop's rule (first or last of the ties, the first NaN) on rows with ties and NaNs.
TEST(ArgMinMax, FloatRowsMatchTheElementRule) {
  std::mt19937 rng(5);
  for (const int64_t n : {1, 7, 16, 100, 1037}) {
    const int64_t rows = 6;
    std::vector<float> x(rows * n);
    for (auto& v : x) v = static_cast<float>(static_cast<int>(rng() % 9)) - 4.0f;  // many ties
    x[2 * n + n / 2] = std::numeric_limits<float>::quiet_NaN();
    x[3 * n + n - 1] = std::numeric_limits<float>::quiet_NaN();
    x[4 * n] = -0.0f;
    for (const char* op : {"ArgMax", "ArgMin"}) {
      for (int64_t last = 0; last < 2; ++last) {
        auto out = Arg(op, Tensor::FromVector<float>({rows, n}, x), 1, 0, last);
        ASSERT_TRUE(out.ok()) << out.status().ToString();
        const int64_t* got = (*out)[0].tensor().data<int64_t>();
        for (int64_t r = 0; r < rows; ++r) {
          int64_t best = 0;
          for (int64_t j = 1; j < n; ++j) {
            const float v = x[r * n + j], b = x[r * n + best];
            if (b != b) break;
            const bool max = op[3] == 'M' && op[4] == 'a';
            if (v != v || (max ? (last ? v >= b : v > b) : (last ? v <= b : v < b))) best = j;
          }
          EXPECT_EQ(got[r], best) << op << " n " << n << " row " << r << " last " << last;
        }
      }
    }
  }
}

TEST(ArgMinMax, EveryNumericType) {
  auto check = [](auto tag) {
    using T = decltype(tag);
    std::vector<T> v;
    for (int i : {3, 7, 1, 4}) v.push_back(FromCompute<T>(static_cast<ComputeType<T>>(i)));
    auto a = Arg("ArgMax", Tensor::FromVector<T>({4}, v), 0, 0, 0);
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_TRUE(TensorsEqual(Tensor::Scalar<int64_t>(1), (*a)[0].tensor()));
    auto b = Arg("ArgMin", Tensor::FromVector<T>({4}, v), 0, 1, 0);
    ASSERT_TRUE(b.ok());
    EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({1}, {2}), (*b)[0].tensor()));
  };
  check(float{}); check(double{}); check(Float16{}); check(BFloat16{}); check(int8_t{}); check(uint8_t{});
  check(int16_t{}); check(uint16_t{}); check(int32_t{}); check(int64_t{}); check(uint32_t{}); check(uint64_t{});
}

TEST(ArgMinMax, Errors) {
  EXPECT_TRUE(Refused(Arg("ArgMax", Tensor::FromVector<float>({2}, {1, 2}), 1, 1, 0), StatusCode::kInvalidArgument, "axis 1 is out of range for rank 1"));
  EXPECT_TRUE(Refused(Arg("ArgMax", Tensor(DataType::kFloat, {2, 0}), 1, 1, 0), StatusCode::kInvalidArgument, "cannot take the arg max over axis 1 of size 0 (input shape [2,0])"));
}

Result<std::vector<Value>> TopK(const Tensor& x, int64_t k, int64_t axis, int64_t largest, int opset = 11) {
  OpTest t("TopK", opset);
  t.Input(x).Input(Tensor::FromVector<int64_t>({1}, {k})).Outputs(2).Attr("axis", axis).Attr("largest", largest);
  return t.Run(RegisterReduceKernels);
}

TEST(TopK, LargestAndSmallestWithStableTies) {
  const Tensor x = Tensor::FromVector<float>({2, 4}, {1, 3, 3, 2, 0, 0, 5, 0});
  auto big = TopK(x, 2, -1, 1);
  ASSERT_TRUE(big.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 2}, {3, 3, 5, 0}), (*big)[0].tensor()));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2, 2}, {1, 2, 2, 0}), (*big)[1].tensor()));
  auto small = TopK(x, 3, 1, 0);
  ASSERT_TRUE(small.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<float>({2, 3}, {1, 2, 3, 0, 0, 0}), (*small)[0].tensor()));
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({2, 3}, {0, 3, 1, 0, 1, 3}), (*small)[1].tensor()));
  // Along axis 0 (strided).
  auto col = TopK(x, 1, 0, 1);
  ASSERT_TRUE(col.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int64_t>({1, 4}, {0, 0, 1, 0}), (*col)[1].tensor()));
}

TEST(TopK, AttributeKInVersion1AndIntegerTypes) {
  OpTest t("TopK", 1);
  t.Input(Tensor::FromVector<uint64_t>({3}, {5, 9, 1})).Outputs(2).Attr("k", int64_t{2});
  auto out = t.Run(RegisterReduceKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint64_t>({2}, {9, 5}), (*out)[0].tensor()));
  auto i8 = TopK(Tensor::FromVector<int8_t>({3}, {-5, 9, 1}), 1, 0, 0);
  ASSERT_TRUE(i8.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int8_t>({1}, {-5}), (*i8)[0].tensor()));
}

TEST(TopK, KOutOfRange) {
  EXPECT_EQ(TopK(Tensor::FromVector<float>({3}, {1, 2, 3}), 4, 0, 1).status().code(), StatusCode::kOutOfRange);
  EXPECT_TRUE(Refused(TopK(Tensor::FromVector<float>({3}, {1, 2, 3}), -1, 0, 1), StatusCode::kOutOfRange, "k = -1 is outside [0, 3] for axis 0 of input shape [3]"));
  auto zero = TopK(Tensor::FromVector<float>({3}, {1, 2, 3}), 0, 0, 1);
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ((*zero)[0].tensor().shape(), (Shape{0}));
}

Result<std::vector<Value>> Cum(const char* op, int opset, const Tensor& x, const Tensor& axis, int64_t exclusive,
                               int64_t reverse) {
  OpTest t(op, opset);
  t.Input(x).Input(axis).Attr("exclusive", exclusive).Attr("reverse", reverse);
  return t.Run(RegisterReduceKernels);
}

TEST(Cumulative, SumModes) {
  const Tensor x = Tensor::FromVector<float>({4}, {1, 2, 3, 4});
  const Tensor axis = Tensor::Scalar<int64_t>(0);
  struct Case { int64_t ex, rev; std::vector<float> expected; };
  for (const Case& c : {Case{0, 0, {1, 3, 6, 10}}, Case{1, 0, {0, 1, 3, 6}}, Case{0, 1, {10, 9, 7, 4}},
                        Case{1, 1, {9, 7, 4, 0}}}) {
    auto out = Cum("CumSum", 14, x, axis, c.ex, c.rev);
    ASSERT_TRUE(out.ok());
    EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({4}, c.expected), (*out)[0].tensor()));
  }
}

TEST(Cumulative, ProductAlongAxisAndTypes) {
  const Tensor x = Tensor::FromVector<int32_t>({2, 3}, {1, 2, 3, 4, 5, 6});
  auto p = Cum("CumProd", 26, x, Tensor::Scalar<int32_t>(-1), 0, 0);
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<int32_t>({2, 3}, {1, 2, 6, 4, 20, 120}), (*p)[0].tensor()));
  auto s = Cum("CumSum", 14, Tensor::FromVector<double>({2, 2}, {1, 2, 3, 4}), Tensor::FromVector<int64_t>({1}, {0}), 1, 0);
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<double>({2, 2}, {0, 0, 1, 2}), (*s)[0].tensor()));
  auto h = Cum("CumSum", 14, Tensor::FromVector<Float16>({3}, {Float16{FloatToHalf(1)}, Float16{FloatToHalf(2)},
                                                              Float16{FloatToHalf(3)}}), Tensor::Scalar<int64_t>(0), 0, 1);
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(HalfToFloat((*h)[0].tensor().data<Float16>()[0].bits), 6.0f);
}

TEST(Cumulative, Errors) {
  const Tensor x = Tensor::FromVector<float>({2}, {1, 2});
  EXPECT_TRUE(Refused(Cum("CumSum", 14, x, Tensor::Scalar<int64_t>(1), 0, 0), StatusCode::kInvalidArgument, "axis 1 is out of range for rank 1"));
  EXPECT_TRUE(Refused(Cum("CumSum", 14, x, Tensor::Scalar<float>(0), 0, 0), StatusCode::kInvalidArgument, "input 'axis' must be int32 or int64, got float32"));
  EXPECT_TRUE(Refused(Cum("CumSum", 14, x, Tensor::FromVector<int64_t>({2}, {0, 0}), 0, 0), StatusCode::kInvalidArgument, "input 'axis' must hold one value, got shape [2]"));
}

}  // namespace
}  // namespace onnxflow
