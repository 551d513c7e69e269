#include "ops/ml/svm_kernel.h"

#include <cmath>

#include <gtest/gtest.h>

namespace onnxflow {
namespace {

// a.b = 1*3 + 2*(-1) + 0*4 = 1; |a-b|^2 = 4 + 9 + 16 = 29.
constexpr double kA[] = {1, 2, 0};
constexpr double kB[] = {3, -1, 4};

TEST(SvmKernel, EachTypeAgainstItsFormula) {
  using Type = SvmKernel::Type;
  EXPECT_DOUBLE_EQ(SvmKernel(Type::kLinear, 0.5, 1, 2)(kA, kB, 3), 1.0);
  EXPECT_DOUBLE_EQ(SvmKernel(Type::kPoly, 0.5, 1, 3)(kA, kB, 3), std::pow(0.5 * 1 + 1, 3));
  EXPECT_DOUBLE_EQ(SvmKernel(Type::kRbf, 0.5, 1, 2)(kA, kB, 3), std::exp(-0.5 * 29));
  EXPECT_DOUBLE_EQ(SvmKernel(Type::kSigmoid, 0.5, 1, 2)(kA, kB, 3), std::tanh(0.5 * 1 + 1));
}

TEST(SvmKernel, LinearIgnoresParameters) {
  EXPECT_DOUBLE_EQ(SvmKernel::Linear()(kA, kB, 3), 1.0);
  EXPECT_DOUBLE_EQ(SvmKernel::Linear()(kA, kB, 0), 0.0);
}

}  // namespace
}  // namespace onnxflow
