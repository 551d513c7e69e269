// Unary math ops, IsNaN/IsInf and BitCast.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "ops/elementwise/register.h"
#include "ops/elementwise/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using testing_util::MakeTensor;

Result<Tensor> Unary(const char* op, int opset, const Tensor& x) {
  OpTest test(op, opset);
  test.Input(x);
  auto out = test.Run(RegisterElementwiseKernels);
  if (!out.ok()) return out.status();
  return out->at(0).tensor();
}

struct MathCase {
  const char* op;
  double (*ref)(double);
  std::vector<double> x;
};

const std::vector<MathCase>& MathCases() {
  static const std::vector<MathCase> cases = {
      {"Abs", [](double v) { return std::fabs(v); }, {-2, 0, 3.5}},
      {"Neg", [](double v) { return -v; }, {-2, 0, 3.5}},
      {"Sign", [](double v) { return double((v > 0) - (v < 0)); }, {-2, 0, 3.5}},
      {"Ceil", [](double v) { return std::ceil(v); }, {-1.5, 0.2, 2.5}},
      {"Floor", [](double v) { return std::floor(v); }, {-1.5, 0.2, 2.5}},
      {"Round", [](double v) { return std::nearbyint(v); }, {-2.5, -1.5, 0.5, 1.5, 2.5, 2.6}},
      {"Reciprocal", [](double v) { return 1 / v; }, {-2, 0.5, 4}},
      {"Sqrt", [](double v) { return std::sqrt(v); }, {0, 2, 9}},
      {"Exp", [](double v) { return std::exp(v); }, {-3, 0, 2}},
      {"Log", [](double v) { return std::log(v); }, {0.5, 1, 10}},
      {"Erf", [](double v) { return std::erf(v); }, {-1, 0, 0.5, 2}},
      {"Sin", [](double v) { return std::sin(v); }, {-1, 0, 2}},
      {"Cos", [](double v) { return std::cos(v); }, {-1, 0, 2}},
      {"Tan", [](double v) { return std::tan(v); }, {-1, 0, 1.2}},
      {"Asin", [](double v) { return std::asin(v); }, {-0.5, 0, 0.9}},
      {"Acos", [](double v) { return std::acos(v); }, {-0.5, 0, 0.9}},
      {"Atan", [](double v) { return std::atan(v); }, {-3, 0, 5}},
      {"Sinh", [](double v) { return std::sinh(v); }, {-1, 0, 2}},
      {"Cosh", [](double v) { return std::cosh(v); }, {-1, 0, 2}},
      {"Asinh", [](double v) { return std::asinh(v); }, {-1, 0, 2}},
      {"Acosh", [](double v) { return std::acosh(v); }, {1, 2, 10}},
      {"Atanh", [](double v) { return std::atanh(v); }, {-0.5, 0, 0.9}},
  };
  return cases;
}

template <typename T>
class UnaryFloatTypedTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double, Float16, BFloat16>;
TYPED_TEST_SUITE(UnaryFloatTypedTest, FloatTypes);

TYPED_TEST(UnaryFloatTypedTest, EveryOpMatchesStd) {
  using T = TypeParam;
  const double rtol = sizeof(T) == 2 ? 1e-2 : 1e-6;
  for (const MathCase& c : MathCases()) {
    std::vector<double> want;
    const Tensor x = MakeTensor<T>({static_cast<int64_t>(c.x.size())}, c.x);
    for (double v : c.x) want.push_back(c.ref(v));
    auto y = Unary(c.op, 22, x);
    ASSERT_TRUE(y.ok()) << c.op << ": " << y.status().ToString();
    EXPECT_TRUE(TensorsNear(MakeTensor<T>({static_cast<int64_t>(want.size())}, want), *y, rtol, 1e-6)) << c.op;
  }
}

template <typename T>
class UnaryIntTypedTest : public ::testing::Test {};
using IntTypes = ::testing::Types<int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(UnaryIntTypedTest, IntTypes);

TYPED_TEST(UnaryIntTypedTest, AbsNegSignOnIntegers) {
  using T = TypeParam;
  const bool is_signed = std::is_signed_v<T>;
  const Tensor x = MakeTensor<T>({3}, {is_signed ? -5.0 : 5.0, 0, 7});
  auto abs = Unary("Abs", 13, x);
  auto sign = Unary("Sign", 13, x);
  ASSERT_TRUE(abs.ok() && sign.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({3}, {5, 0, 7}), *abs));
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({3}, {is_signed ? -1.0 : 1.0, 0, 1}), *sign));
  if constexpr (std::is_signed_v<T>) {
    auto neg = Unary("Neg", 13, x);
    ASSERT_TRUE(neg.ok());
    EXPECT_TRUE(TensorsEqual(MakeTensor<T>({3}, {5, 0, -7}), *neg));
  }
  auto sqrt = Unary("Sqrt", 13, x);  // float types only: refused when the kernel is built
  ASSERT_TRUE(Refused(sqrt, StatusCode::kUnimplemented, "Sqrt does not take "));
  EXPECT_EQ(sqrt.status().code(), StatusCode::kUnimplemented);
}

TEST(UnaryMathTest, LargeFloatInputUsesSimdAndThreads) {
  const int64_t n = 300001;
  std::vector<double> x(n), want(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = (i % 2001 - 1000) * 0.01;
    want[i] = std::exp(x[i]);
  }
  OpTest test("Exp", 13);
  test.Input(MakeTensor<float>({n}, x)).Threads(2);
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(MakeTensor<float>({n}, want), out->at(0).tensor(), 1e-6, 0));
}

template <typename T>
class FloatClassTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(FloatClassTypedTest, FloatTypes);

TYPED_TEST(FloatClassTypedTest, NaNAndInf) {
  using T = TypeParam;
  const Tensor x = MakeTensor<T>({4}, {1.0, NAN, INFINITY, -INFINITY});
  auto nan = Unary("IsNaN", 20, x);
  auto inf = Unary("IsInf", 20, x);
  ASSERT_TRUE(nan.ok() && inf.ok());
  const std::vector<bool> want_nan = {false, true, false, false}, want_inf = {false, false, true, true};
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(nan->data<bool>()[i], want_nan[i]) << i;
    EXPECT_EQ(inf->data<bool>()[i], want_inf[i]) << i;
  }
}

TEST(FloatClassTest, FnuzFormatsHaveOnlyOneNaN) {
  Tensor a(DataType::kFloat8E4M3FNUZ, {2});
  a.mutable_data<Float8E4M3FNUZ>()[0].bits = 0x80;
  a.mutable_data<Float8E4M3FNUZ>()[1].bits = 0x7f;  // a finite value in FNUZ
  auto nan = Unary("IsNaN", 20, a);
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(nan->data<bool>()[0]);
  EXPECT_FALSE(nan->data<bool>()[1]);
  Tensor b(DataType::kFloat8E5M2FNUZ, {2});
  b.mutable_data<Float8E5M2FNUZ>()[0].bits = 0x80;
  b.mutable_data<Float8E5M2FNUZ>()[1].bits = 0x7f;
  auto inf = Unary("IsInf", 20, b);
  ASSERT_TRUE(inf.ok());
  EXPECT_FALSE(inf->data<bool>()[0]);
  EXPECT_FALSE(inf->data<bool>()[1]);
  auto nan_b = Unary("IsNaN", 20, b);
  ASSERT_TRUE(nan_b.ok());
  EXPECT_TRUE(nan_b->data<bool>()[0]);
}

TEST(FloatClassTest, IsNaNAndIsInfWithDetectFlags) {
  const float inf = std::numeric_limits<float>::infinity();
  const Tensor x = Tensor::FromVector<float>({4}, {1.0f, NAN, inf, -inf});
  auto nan = Unary("IsNaN", 20, x);
  ASSERT_TRUE(nan.ok());
  EXPECT_EQ(std::vector<bool>(nan->data<bool>(), nan->data<bool>() + 4),
            (std::vector<bool>{false, true, false, false}));
  for (auto [pos, neg] : {std::pair<int64_t, int64_t>{1, 1}, {1, 0}, {0, 1}}) {
    OpTest test("IsInf", 20);
    test.Input(x).Attr("detect_positive", pos).Attr("detect_negative", neg);
    auto out = test.Run(RegisterElementwiseKernels);
    ASSERT_TRUE(out.ok());
    const bool* y = out->at(0).tensor().data<bool>();
    EXPECT_FALSE(y[0]);
    EXPECT_FALSE(y[1]);
    EXPECT_EQ(y[2], pos == 1);
    EXPECT_EQ(y[3], neg == 1);
  }
  auto half = Unary("IsNaN", 20, MakeTensor<Float16>({2}, {NAN, 1}));
  ASSERT_TRUE(half.ok());
  EXPECT_TRUE(half->data<bool>()[0]);
  EXPECT_FALSE(half->data<bool>()[1]);
}

TEST(FloatClassTest, Float8Bits) {
  Tensor e4m3(DataType::kFloat8E4M3FN, {3});
  e4m3.mutable_data<Float8E4M3FN>()[0].bits = 0x7f;  // NaN
  e4m3.mutable_data<Float8E4M3FN>()[1].bits = 0x7e;  // 448
  e4m3.mutable_data<Float8E4M3FN>()[2].bits = 0xff;  // -NaN
  auto nan = Unary("IsNaN", 20, e4m3);
  ASSERT_TRUE(nan.ok());
  EXPECT_TRUE(nan->data<bool>()[0]);
  EXPECT_FALSE(nan->data<bool>()[1]);
  EXPECT_TRUE(nan->data<bool>()[2]);
  Tensor e5m2(DataType::kFloat8E5M2, {3});
  e5m2.mutable_data<Float8E5M2>()[0].bits = 0x7c;  // +inf
  e5m2.mutable_data<Float8E5M2>()[1].bits = 0xfc;  // -inf
  e5m2.mutable_data<Float8E5M2>()[2].bits = 0x7d;  // NaN
  auto inf = Unary("IsInf", 20, e5m2);
  ASSERT_TRUE(inf.ok());
  EXPECT_TRUE(inf->data<bool>()[0]);
  EXPECT_TRUE(inf->data<bool>()[1]);
  EXPECT_FALSE(inf->data<bool>()[2]);
}

TEST(BitCastTest, ReinterpretsBits) {
  OpTest test("BitCast", 26);
  test.Input(Tensor::FromVector<float>({2}, {1.0f, -2.0f})).Attr("to", int64_t{6});
  auto out = test.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->at(0).tensor().dtype(), DataType::kInt32);
  EXPECT_EQ(out->at(0).tensor().data<int32_t>()[0], 0x3f800000);
  EXPECT_EQ(static_cast<uint32_t>(out->at(0).tensor().data<int32_t>()[1]), 0xc0000000u);

  OpTest bad("BitCast", 26);
  bad.Input(Tensor::FromVector<float>({1}, {1.0f})).Attr("to", int64_t{7});  // int64: 64 bits
  EXPECT_TRUE(Refused(bad.Run(RegisterElementwiseKernels), StatusCode::kInvalidArgument, "BitCast: float32 and int64 have different bit widths"));

  Tensor u4(DataType::kUint4, {2});
  u4.mutable_data<UInt4>()[0].value = 15;
  u4.mutable_data<UInt4>()[1].value = 7;
  OpTest sub("BitCast", 26);
  sub.Input(u4).Attr("to", static_cast<int64_t>(DataType::kInt4));
  auto s = sub.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->at(0).tensor().data<Int4>()[0].value, -1);
  EXPECT_EQ(s->at(0).tensor().data<Int4>()[1].value, 7);
}

TEST(BitCastTest, BoolUint8AndSixtyFourBits) {
  OpTest to_u8("BitCast", 26);
  Tensor b(DataType::kBool, {2});
  b.mutable_data<bool>()[0] = true;
  to_u8.Input(b).Attr("to", static_cast<int64_t>(DataType::kUint8));
  auto u = to_u8.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(u.ok()) << u.status().ToString();
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint8_t>({2}, {1, 0}), u->at(0).tensor()));
  OpTest to_f64("BitCast", 26);
  to_f64.Input(Tensor::FromVector<int64_t>({1}, {0x3ff0000000000000LL}))
      .Attr("to", static_cast<int64_t>(DataType::kDouble));
  auto d = to_f64.Run(RegisterElementwiseKernels);
  ASSERT_TRUE(d.ok());
  EXPECT_EQ(d->at(0).tensor().data<double>()[0], 1.0);
  OpTest from_string("BitCast", 26);
  from_string.Input(Tensor::FromVector<std::string>({1}, {"x"})).Attr("to", static_cast<int64_t>(DataType::kUint8));
  EXPECT_TRUE(Refused(from_string.Run(RegisterElementwiseKernels), StatusCode::kInvalidArgument, "BitCast cannot take a string tensor"));
}

}  // namespace
}  // namespace onnxflow
