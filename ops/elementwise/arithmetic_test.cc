// Add/Sub/Mul/Div over every numeric type, integer division errors, Pow with mixed types, Mod.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>

#include "ops/elementwise/register.h"
#include "ops/elementwise/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using testing_util::MakeTensor;

Result<Tensor> RunOp(OpTest& test) {
  auto out = test.Run(RegisterElementwiseKernels);
  if (!out.ok()) return out.status();
  return out->at(0).tensor();
}

template <typename T>
class ArithmeticTypedTest : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                      uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(ArithmeticTypedTest, NumericTypes);

TYPED_TEST(ArithmeticTypedTest, AddSubMulDivWithBroadcast) {
  using T = TypeParam;
  const Tensor a = MakeTensor<T>({2, 3}, {2, 4, 6, 8, 10, 12});
  const Tensor b = MakeTensor<T>({3}, {1, 2, 3});
  struct Case {
    const char* op;
    std::vector<double> want;
  };
  for (const Case& c : {Case{"Add", {3, 6, 9, 9, 12, 15}}, Case{"Sub", {1, 2, 3, 7, 8, 9}},
                        Case{"Mul", {2, 8, 18, 8, 20, 36}}, Case{"Div", {2, 2, 2, 8, 5, 4}}}) {
    OpTest test(c.op, 14);
    test.Input(a).Input(b);
    auto y = RunOp(test);
    ASSERT_TRUE(y.ok()) << c.op << ": " << y.status().ToString();
    EXPECT_TRUE(TensorsNear(MakeTensor<T>({2, 3}, c.want), *y, 1e-2, 0)) << c.op;
  }
  // Scalar on the left.
  OpTest test("Sub", 14);
  test.Input(MakeTensor<T>({}, {20})).Input(b);
  auto y = RunOp(test);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsNear(MakeTensor<T>({3}, {19, 18, 17}), *y, 1e-2, 0));
}

TEST(ArithmeticTest, IntegerDivisionTruncatesTowardZero) {
  OpTest test("Div", 14);
  test.Input(MakeTensor<int32_t>({4}, {7, -7, 7, -7})).Input(MakeTensor<int32_t>({4}, {2, 2, -2, -2}));
  auto y = RunOp(test);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<int32_t>({4}, {3, -3, -3, 3}), *y));
}

TEST(ArithmeticTest, IntegerDivideByZeroIsAnError) {
  OpTest test("Div", 14);
  test.Input(MakeTensor<int64_t>({3}, {1, 2, 3})).Input(MakeTensor<int64_t>({3}, {1, 0, 1}));
  auto y = RunOp(test);
  ASSERT_TRUE(Refused(y, StatusCode::kInvalidArgument, "integer division by zero (input B, element 1)"));
  EXPECT_EQ(y.status().code(), StatusCode::kInvalidArgument);

  OpTest unsigned_test("Div", 14);
  unsigned_test.Input(MakeTensor<uint8_t>({2}, {1, 2})).Input(MakeTensor<uint8_t>({}, {0}));
  EXPECT_TRUE(Refused(RunOp(unsigned_test), StatusCode::kInvalidArgument, "integer division by zero (input B, element 0)"));
}

TEST(ArithmeticTest, IntMinDividedByMinusOneIsAnError) {
  OpTest test("Div", 14);
  test.Input(Tensor::FromVector<int32_t>({2}, {std::numeric_limits<int32_t>::min(), 4}))
      .Input(Tensor::FromVector<int32_t>({}, {-1}));
  auto y = RunOp(test);
  ASSERT_TRUE(Refused(y, StatusCode::kInvalidArgument, "integer division overflows: the smallest value divided by -1"));
  EXPECT_EQ(y.status().code(), StatusCode::kInvalidArgument);
}

TEST(ArithmeticTest, IntegerOverflowWraps) {
  OpTest test("Add", 14);
  test.Input(MakeTensor<int8_t>({2}, {127, -128})).Input(MakeTensor<int8_t>({2}, {1, -1}));
  auto y = RunOp(test);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<int8_t>({2}, {-128, 127}), *y));
  OpTest mul("Mul", 14);
  mul.Input(Tensor::FromVector<uint16_t>({1}, {65535})).Input(Tensor::FromVector<uint16_t>({1}, {65535}));
  auto z = RunOp(mul);
  ASSERT_TRUE(z.ok());
  EXPECT_TRUE(TensorsEqual(Tensor::FromVector<uint16_t>({1}, {1}), *z));
}

TEST(ArithmeticTest, MixedTypesAreRejected) {
  OpTest test("Add", 14);
  test.Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<double>({1}, {1}));
  EXPECT_TRUE(Refused(RunOp(test), StatusCode::kInvalidArgument, "Add: inputs have different types float32 and float64"));
}

TEST(PowTest, MixedBaseAndExponentTypes) {
  {
    OpTest test("Pow", 15);
    test.Input(MakeTensor<float>({3}, {1, 2, 3})).Input(MakeTensor<int64_t>({3}, {4, 5, 6}));
    auto y = RunOp(test);
    ASSERT_TRUE(y.ok()) << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(MakeTensor<float>({3}, {1, 32, 729}), *y));
  }
  {
    OpTest test("Pow", 15);
    test.Input(MakeTensor<int32_t>({3}, {1, 2, 3})).Input(MakeTensor<float>({3}, {4, 5, 0.5}));
    auto y = RunOp(test);
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(TensorsEqual(MakeTensor<int32_t>({3}, {1, 32, 1}), *y));
  }
  {
    OpTest test("Pow", 15);
    test.Input(MakeTensor<int64_t>({4}, {2, -2, 1, -1})).Input(MakeTensor<int64_t>({4}, {62, 3, -5, -3}));
    auto y = RunOp(test);
    ASSERT_TRUE(y.ok());
    EXPECT_EQ(y->data<int64_t>()[0], int64_t{1} << 62);
    EXPECT_EQ(y->data<int64_t>()[1], -8);
    EXPECT_EQ(y->data<int64_t>()[2], 1);
    EXPECT_EQ(y->data<int64_t>()[3], -1);
  }
  for (double e : {2.0, 3.0, 0.5}) {  // the x^2 fast path and the general path
    OpTest test("Pow", 15);
    test.Input(MakeTensor<float>({2, 2}, {-1.5, 2, 3, 0})).Input(MakeTensor<float>({}, {e}));
    auto y = RunOp(test);
    ASSERT_TRUE(y.ok());
    std::vector<double> want;
    for (double x : {-1.5, 2.0, 3.0, 0.0}) want.push_back(std::pow(x, e));
    EXPECT_TRUE(TensorsNear(MakeTensor<float>({2, 2}, want), *y, 1e-6, 0)) << e;
  }
  {
    OpTest test("Pow", 15);
    test.Input(MakeTensor<Float16>({2}, {2, 3})).Input(MakeTensor<double>({2}, {3, 2}));
    auto y = RunOp(test);
    ASSERT_TRUE(y.ok());
    EXPECT_TRUE(TensorsEqual(MakeTensor<Float16>({2}, {8, 9}), *y));
  }
}

template <typename T>
class PowBaseTypedTest : public ::testing::Test {};
using PowBaseTypes = ::testing::Types<float, double, Float16, BFloat16, int32_t, int64_t>;
TYPED_TEST_SUITE(PowBaseTypedTest, PowBaseTypes);

TYPED_TEST(PowBaseTypedTest, IntegerAndFloatExponents) {
  using T = TypeParam;
  const Tensor base = MakeTensor<T>({2, 2}, {1, 2, 3, 4});
  for (const Tensor& exponent : {MakeTensor<int64_t>({2}, {2, 3}), MakeTensor<uint8_t>({2}, {2, 3}),
                                 MakeTensor<float>({2}, {2, 3}), MakeTensor<double>({2}, {2, 3})}) {
    OpTest test("Pow", 15);
    test.Input(base).Input(exponent);
    auto y = RunOp(test);
    ASSERT_TRUE(y.ok()) << DataTypeName(exponent.dtype()) << ": " << y.status().ToString();
    EXPECT_TRUE(TensorsEqual(MakeTensor<T>({2, 2}, {1, 8, 9, 64}), *y)) << DataTypeName(exponent.dtype());
  }
}

template <typename T>
class ModTypedTest : public ::testing::Test {};
TYPED_TEST_SUITE(ModTypedTest, NumericTypes);

TYPED_TEST(ModTypedTest, PositiveOperandsBroadcast) {
  using T = TypeParam;
  OpTest test("Mod", 13);
  test.Input(MakeTensor<T>({2, 2}, {7, 8, 9, 10})).Input(MakeTensor<T>({2}, {4, 3}));
  if (std::is_floating_point_v<ComputeType<T>>) test.Attr("fmod", int64_t{1});
  auto y = RunOp(test);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({2, 2}, {3, 2, 1, 1}), *y));
}

TEST(ModTest, IntegerSignFollowsDivisorUnlessFmod) {
  const Tensor a = MakeTensor<int32_t>({4}, {7, -7, 7, -7});
  const Tensor b = MakeTensor<int32_t>({4}, {3, 3, -3, -3});
  OpTest mod("Mod", 13);
  mod.Input(a).Input(b);
  auto y = RunOp(mod);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<int32_t>({4}, {1, 2, -2, -1}), *y));
  OpTest fmod("Mod", 13);
  fmod.Input(a).Input(b).Attr("fmod", int64_t{1});
  auto z = RunOp(fmod);
  ASSERT_TRUE(z.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<int32_t>({4}, {1, -1, 1, -1}), *z));
}

TEST(ModTest, FloatUsesFmodAndZeroDivisorErrors) {
  OpTest test("Mod", 13);
  test.Input(MakeTensor<float>({2}, {-4.5, 5.5})).Input(MakeTensor<float>({}, {2})).Attr("fmod", int64_t{1});
  auto y = RunOp(test);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<float>({2}, {-0.5, 1.5}), *y));
  OpTest bad("Mod", 13);
  bad.Input(MakeTensor<uint32_t>({2}, {1, 2})).Input(MakeTensor<uint32_t>({2}, {0, 1}));
  EXPECT_TRUE(Refused(RunOp(bad), StatusCode::kInvalidArgument, "Mod: integer division by zero (input B, element 0)"));
  OpTest min_case("Mod", 13);
  min_case.Input(Tensor::FromVector<int32_t>({1}, {std::numeric_limits<int32_t>::min()}))
      .Input(Tensor::FromVector<int32_t>({1}, {-1}));
  auto m = RunOp(min_case);
  ASSERT_TRUE(m.ok());
  EXPECT_EQ(m->data<int32_t>()[0], 0);
}

}  // namespace
}  // namespace onnxflow
