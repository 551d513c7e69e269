// Clip (attributes and inputs, every numeric type), PRelu (broadcast slope) and SwiGLU.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/activation/register.h"
#include "ops/elementwise/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using testing_util::MakeTensor;

template <typename T>
class ClipTypedTest : public ::testing::Test {};
using NumericTypes = ::testing::Types<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                      uint16_t, uint32_t, uint64_t>;
TYPED_TEST_SUITE(ClipTypedTest, NumericTypes);

TYPED_TEST(ClipTypedTest, MinAndMaxInputs) {
  using T = TypeParam;
  const Tensor x = MakeTensor<T>({5}, {0, 2, 4, 6, 8});
  OpTest both("Clip", 13);
  both.Input(x).Input(MakeTensor<T>({}, {3})).Input(MakeTensor<T>({}, {6}));
  auto y = both.Run(RegisterActivationKernels);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({5}, {3, 3, 4, 6, 6}), y->at(0).tensor()));
  OpTest max_only("Clip", 13);
  max_only.Input(x).AbsentInput().Input(MakeTensor<T>({}, {5}));
  auto z = max_only.Run(RegisterActivationKernels);
  ASSERT_TRUE(z.ok()) << z.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({5}, {0, 2, 4, 5, 5}), z->at(0).tensor()));
  OpTest none("Clip", 13);
  none.Input(x);
  auto w = none.Run(RegisterActivationKernels);
  ASSERT_TRUE(w.ok());
  EXPECT_TRUE(TensorsEqual(x, w->at(0).tensor()));
}

TEST(ClipTest, AttributesBeforeOpset11) {
  OpTest test("Clip", 6);
  test.Input(MakeTensor<float>({4}, {-3, -0.5, 0.5, 3})).Attr("min", -1.0f).Attr("max", 1.0f);
  auto y = test.Run(RegisterActivationKernels);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<float>({4}, {-1, -0.5, 0.5, 1}), y->at(0).tensor()));
}

TEST(ClipTest, MinGreaterThanMaxAndBadBounds) {
  OpTest test("Clip", 13);
  test.Input(MakeTensor<float>({3}, {-1, 0, 5})).Input(MakeTensor<float>({}, {2})).Input(MakeTensor<float>({}, {1}));
  auto y = test.Run(RegisterActivationKernels);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<float>({3}, {1, 1, 1}), y->at(0).tensor()));
  OpTest bad("Clip", 13);
  bad.Input(MakeTensor<float>({3}, {-1, 0, 5})).Input(MakeTensor<float>({2}, {0, 1}));
  EXPECT_TRUE(Refused(bad.Run(RegisterActivationKernels), StatusCode::kInvalidArgument, "Clip: min must hold one value, not shape [2]"));
  OpTest wrong_type("Clip", 13);
  wrong_type.Input(MakeTensor<float>({1}, {1})).Input(MakeTensor<double>({}, {0}));
  EXPECT_TRUE(Refused(wrong_type.Run(RegisterActivationKernels), StatusCode::kInvalidArgument, "Clip: min has type float64, the input has float32"));
}

template <typename T>
class PReluTypedTest : public ::testing::Test {};
using PReluTypes = ::testing::Types<float, double, Float16, BFloat16, int32_t, int64_t>;
TYPED_TEST_SUITE(PReluTypedTest, PReluTypes);

TYPED_TEST(PReluTypedTest, PerChannelSlope) {
  using T = TypeParam;
  OpTest test("PRelu", 16);
  test.Input(MakeTensor<T>({1, 2, 2}, {-4, 4, -8, 8})).Input(MakeTensor<T>({2, 1}, {2, 3}));
  auto y = test.Run(RegisterActivationKernels);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({1, 2, 2}, {-8, 4, -24, 8}), y->at(0).tensor()));
}

TEST(PReluTest, SlopeMustBroadcastToX) {
  OpTest test("PRelu", 16);
  test.Input(MakeTensor<float>({2}, {-1, 1})).Input(MakeTensor<float>({2, 2}, {1, 2, 3, 4}));
  EXPECT_TRUE(Refused(test.Run(RegisterActivationKernels), StatusCode::kInvalidArgument, "PRelu: slope of shape [2,2] does not broadcast to X's shape [2]"));
  OpTest unsigned_slope("PRelu", 16);
  unsigned_slope.Input(MakeTensor<uint32_t>({2}, {1, 2})).Input(MakeTensor<uint32_t>({1}, {3}));
  auto y = unsigned_slope.Run(RegisterActivationKernels);
  ASSERT_TRUE(y.ok());
  EXPECT_TRUE(TensorsEqual(MakeTensor<uint32_t>({2}, {1, 2}), y->at(0).tensor()));
}

template <typename T>
class SwiGluTypedTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double, Float16, BFloat16>;
TYPED_TEST_SUITE(SwiGluTypedTest, FloatTypes);

TYPED_TEST(SwiGluTypedTest, GateTimesValue) {
  using T = TypeParam;
  const std::vector<double> a = {-2, -0.5, 0, 1, 3, 6}, b = {1, 2, 3, -1, 0.5, 2};
  std::vector<double> want;
  for (size_t i = 0; i < a.size(); ++i) want.push_back(a[i] / (1 + std::exp(-0.5 * a[i])) * b[i]);
  OpTest test("SwiGLU", 28);
  test.Input(MakeTensor<T>({2, 3}, a)).Input(MakeTensor<T>({2, 3}, b)).Attr("alpha", 0.5f);
  auto y = test.Run(RegisterActivationKernels);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(MakeTensor<T>({2, 3}, want), y->at(0).tensor(), sizeof(T) == 2 ? 1e-2 : 1e-6, 1e-6));
}

TEST(SwiGluTest, ShapesMustMatch) {
  OpTest test("SwiGLU", 28);
  test.Input(MakeTensor<float>({2, 3}, {1, 2, 3, 4, 5, 6})).Input(MakeTensor<float>({3}, {1, 2, 3}));
  EXPECT_TRUE(Refused(test.Run(RegisterActivationKernels), StatusCode::kInvalidArgument, "SwiGLU: A of shape [2,3] and B of shape [3] must have the same shape"));
}

}  // namespace
}  // namespace onnxflow
