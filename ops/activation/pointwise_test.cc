// The one-input activation kernels: every op through the kernel, every type of at least one op.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/activation/register.h"
#include "ops/elementwise/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using testing_util::MakeTensor;

struct Case {
  const char* op;
  int opset;
  std::vector<std::pair<std::string, float>> attrs;
  std::string approximate;
  double (*ref)(double);
};

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"Relu", 14, {}, "", [](double x) { return x < 0 ? 0 : x; }},
      {"LeakyRelu", 16, {{"alpha", 0.1f}}, "", [](double x) { return x < 0 ? 0.1 * x : x; }},
      {"Sigmoid", 13, {}, "", [](double x) { return 1 / (1 + std::exp(-x)); }},
      {"HardSigmoid",
       6,
       {{"alpha", 0.5f}, {"beta", 0.6f}},
       "",
       [](double x) { return std::min(1.0, std::max(0.0, 0.5 * x + 0.6)); }},
      {"HardSwish", 14, {}, "", [](double x) { return x * std::min(1.0, std::max(0.0, x / 6 + 0.5)); }},
      {"Tanh", 13, {}, "", [](double x) { return std::tanh(x); }},
      {"Elu", 6, {{"alpha", 2.0f}}, "", [](double x) { return x < 0 ? 2 * (std::exp(x) - 1) : x; }},
      {"Selu",
       6,
       {{"alpha", 2.0f}, {"gamma", 3.0f}},
       "",
       [](double x) { return x <= 0 ? 3 * (2 * std::exp(x) - 2) : 3 * x; }},
      {"Celu",
       12,
       {{"alpha", 2.0f}},
       "",
       [](double x) { return std::max(0.0, x) + std::min(0.0, 2 * (std::exp(x / 2) - 1)); }},
      {"Gelu", 20, {}, "", [](double x) { return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0))); }},
      {"Gelu",
       20,
       {},
       "tanh",
       [](double x) { return 0.5 * x * (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x))); }},
      {"Mish", 18, {}, "", [](double x) { return x * std::tanh(std::log1p(std::exp(x))); }},
      {"Softplus", 1, {}, "", [](double x) { return std::log(std::exp(x) + 1); }},
      {"Softsign", 1, {}, "", [](double x) { return x / (1 + std::fabs(x)); }},
      {"ThresholdedRelu", 10, {{"alpha", 0.5f}}, "", [](double x) { return x > 0.5 ? x : 0; }},
      {"Shrink",
       9,
       {{"lambd", 1.0f}, {"bias", 0.5f}},
       "",
       [](double x) { return x < -1 ? x + 0.5 : (x > 1 ? x - 0.5 : 0); }},
      {"Swish", 24, {{"alpha", 2.0f}}, "", [](double x) { return x / (1 + std::exp(-2 * x)); }},
  };
  return cases;
}

template <typename T>
class PointwiseTypedTest : public ::testing::Test {};
using FloatTypes = ::testing::Types<float, double, Float16, BFloat16>;
TYPED_TEST_SUITE(PointwiseTypedTest, FloatTypes);

TYPED_TEST(PointwiseTypedTest, EveryActivationMatchesItsDefinition) {
  using T = TypeParam;
  const std::vector<double> x = {-4, -1.5, -0.25, 0, 0.3, 1.25, 3, 7};
  const double rtol = sizeof(T) == 2 ? 1e-2 : 1e-5;
  for (const Case& c : Cases()) {
    OpTest test(c.op, c.opset);
    test.Input(MakeTensor<T>({2, 4}, x));
    for (const auto& [name, value] : c.attrs) test.Attr(name, value);
    if (!c.approximate.empty()) test.Attr("approximate", c.approximate);
    auto out = test.Run(RegisterActivationKernels);
    ASSERT_TRUE(out.ok()) << c.op << ": " << out.status().ToString();
    std::vector<double> want;
    for (double v : x)
      want.push_back(c.ref(static_cast<double>(ToCompute(FromCompute<T>(static_cast<ComputeType<T>>(v))))));
    EXPECT_TRUE(TensorsNear(MakeTensor<T>({2, 4}, want), out->at(0).tensor(), rtol, 1e-5))
        << c.op << " " << c.approximate;
  }
}

template <typename T>
class ReluIntTypedTest : public ::testing::Test {};
using ReluIntTypes = ::testing::Types<int8_t, int16_t, int32_t, int64_t>;
TYPED_TEST_SUITE(ReluIntTypedTest, ReluIntTypes);

TYPED_TEST(ReluIntTypedTest, ReluOnSignedIntegers) {
  using T = TypeParam;
  OpTest test("Relu", 14);
  test.Input(MakeTensor<T>({4}, {-3, 0, 5, -128}));
  auto out = test.Run(RegisterActivationKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<T>({4}, {0, 0, 5, 0}), out->at(0).tensor()));
}

TEST(PointwiseTest, ShrinkOnIntegersAndBadAttributes) {
  OpTest test("Shrink", 9);
  test.Input(MakeTensor<int32_t>({4}, {-5, -1, 1, 5})).Attr("lambd", 1.5f).Attr("bias", 1.0f);
  auto out = test.Run(RegisterActivationKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<int32_t>({4}, {-4, 0, 0, 4}), out->at(0).tensor()));

  OpTest shrink_u8("Shrink", 9);  // 1 - 2 leaves uint8's range: wraps like numpy's astype
  shrink_u8.Input(MakeTensor<uint8_t>({3}, {0, 1, 200})).Attr("lambd", 0.5f).Attr("bias", 2.0f);
  auto u8 = shrink_u8.Run(RegisterActivationKernels);
  ASSERT_TRUE(u8.ok()) << u8.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<uint8_t>({3}, {0, 255, 198}), u8->at(0).tensor()));

  OpTest gelu("Gelu", 20);
  gelu.Input(MakeTensor<float>({1}, {1})).Attr("approximate", std::string("fast"));
  EXPECT_TRUE(Refused(gelu.Run(RegisterActivationKernels), StatusCode::kInvalidArgument, "Gelu: approximate must be 'none' or 'tanh', not 'fast'"));
  OpTest sigmoid_int("Sigmoid", 13);
  sigmoid_int.Input(MakeTensor<int32_t>({1}, {1}));
  EXPECT_TRUE(Refused(sigmoid_int.Run(RegisterActivationKernels), StatusCode::kUnimplemented, "Sigmoid does not take int32 (input 0)"));
}

TEST(PointwiseTest, LargeInputSplitsOverThreads) {
  const int64_t n = 200003;
  std::vector<double> x(n), want(n);
  for (int64_t i = 0; i < n; ++i) {
    x[i] = (i % 997 - 498) * 0.02;
    want[i] = 1 / (1 + std::exp(-x[i]));
  }
  OpTest test("Sigmoid", 13);
  test.Input(MakeTensor<float>({n}, x)).Threads(2);
  auto out = test.Run(RegisterActivationKernels);
  ASSERT_TRUE(out.ok());
  EXPECT_TRUE(TensorsNear(MakeTensor<float>({n}, want), out->at(0).tensor(), 1e-6, 1e-7));
}

}  // namespace
}  // namespace onnxflow
