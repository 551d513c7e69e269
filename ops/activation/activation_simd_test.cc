// The Highway float32 activations against the scalar definitions (in double), over odd sizes,
// misaligned pointers and special values.
#include "ops/activation/activation_simd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/elementwise/test_util.h"
#include "ops/framework/every_target.h"

namespace onnxflow {
namespace {

class ActivationSimdTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(ActivationSimdTest);

using testing_util::OddSizes;
using testing_util::RandomFloats;

struct Case {
  ActOp op;
  ActParams p;
  const char* name;
};

std::vector<Case> Cases() {
  auto params = [](float a, float b, float g) {
    ActParams p;
    p.alpha = a;
    p.beta = b;
    p.gamma = g;
    return p;
  };
  return {
      {ActOp::kRelu, {}, "Relu"},
      {ActOp::kLeakyRelu, params(0.01f, 0, 0), "LeakyRelu"},
      {ActOp::kSigmoid, {}, "Sigmoid"},
      {ActOp::kHardSigmoid, params(0.2f, 0.5f, 0), "HardSigmoid"},
      {ActOp::kHardSwish, {}, "HardSwish"},
      {ActOp::kTanh, {}, "Tanh"},
      {ActOp::kElu, params(1.5f, 0, 0), "Elu"},
      {ActOp::kSelu, params(1.6732632f, 0, 1.0507010f), "Selu"},
      {ActOp::kCelu, params(0.7f, 0, 0), "Celu"},
      {ActOp::kGelu, {}, "Gelu"},
      {ActOp::kGeluTanh, {}, "GeluTanh"},
      {ActOp::kMish, {}, "Mish"},
      {ActOp::kSoftplus, {}, "Softplus"},
      {ActOp::kSoftsign, {}, "Softsign"},
      {ActOp::kThresholdedRelu, params(1.0f, 0, 0), "ThresholdedRelu"},
      {ActOp::kShrink, params(0.5f, 0.25f, 0), "Shrink"},
      {ActOp::kSwish, params(1.7f, 0, 0), "Swish"},
      {ActOp::kClip, params(-1.0f, 2.0f, 0), "Clip"},
  };
}

bool Close(double want, float got, double rtol, double atol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return want == got;
  return std::fabs(want - got) <= atol + rtol * std::fabs(want);
}

TEST_P(ActivationSimdTest, MatchesScalarReferenceOverSizesAndOffsets) {
  const std::vector<float> x_all = RandomFloats(1100, -12, 12, 11);
  for (const Case& c : Cases()) {
    for (int64_t n : OddSizes()) {
      for (int offset : {0, 1, 3}) {
        const float* x = x_all.data() + offset;
        std::vector<float> y(n + 1, -777.0f);
        ActivationFloat(c.op, c.p, x, y.data(), n);
        ASSERT_EQ(y[n], -777.0f) << c.name << " wrote past the end";
        for (int64_t i = 0; i < n; ++i) {
          const double want = ActivationScalar<double>(c.op, c.p, static_cast<double>(x[i]));
          ASSERT_TRUE(Close(want, y[i], 2e-6, 2e-7)) << c.name << " x " << x[i] << ": " << y[i] << " vs " << want;
        }
      }
    }
  }
}

TEST_P(ActivationSimdTest, SpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.0f, -0.0f, inf, -inf, nan, 100.0f, -100.0f, 1e-20f, -1e-20f};
  for (const Case& c : Cases()) {
    std::vector<float> y(x.size());
    ActivationFloat(c.op, c.p, x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      const double want = ActivationScalar<double>(c.op, c.p, static_cast<double>(x[i]));
      // x * f(x) forms give NaN at +-inf (inf * 0) in both; skip only where the double
      // reference itself is NaN from that and float agrees by construction.
      EXPECT_TRUE(Close(want, y[i], 2e-6, 1e-30)) << c.name << " x " << x[i] << ": " << y[i] << " vs " << want;
    }
  }
}

TEST_P(ActivationSimdTest, SwiGlu) {
  const std::vector<float> a_all = RandomFloats(1100, -8, 8, 5), b_all = RandomFloats(1100, -3, 3, 6);
  for (int64_t n : OddSizes()) {
    for (int offset : {0, 1}) {
      std::vector<float> y(n);
      const float* a = a_all.data() + offset;
      const float* b = b_all.data() + 2 * offset;
      SwiGluFloat(1.5f, a, b, y.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double want = a[i] / (1.0 + std::exp(-1.5 * a[i])) * b[i];
        ASSERT_TRUE(Close(want, y[i], 2e-6, 1e-7)) << "x " << a[i] << ": " << y[i] << " vs " << want;
      }
    }
  }
}

// PRelu's two run shapes, a slope per element and one slope over a channel's plane, bit for bit
// against the scalar select, over odd sizes and misaligned pointers, and in place.
TEST_P(ActivationSimdTest, PReluMatchesScalarSelect) {
  const std::vector<float> x_all = RandomFloats(1100, -6, 6, 21), s_all = RandomFloats(1100, -0.5f, 1.5f, 22);
  for (int64_t n : OddSizes()) {
    for (int offset : {0, 1, 3}) {
      const float* x = x_all.data() + offset;
      const float* s = s_all.data() + 2 * offset;
      for (bool slope_bcast : {false, true}) {
        std::vector<float> y(n + 1, -777.0f);
        PReluFloat(x, false, s, slope_bcast, y.data(), n);
        ASSERT_EQ(y[n], -777.0f) << "wrote past the end, n " << n;
        for (int64_t i = 0; i < n; ++i) {
          const float slope = s[slope_bcast ? 0 : i];
          ASSERT_EQ(y[i], x[i] < 0 ? x[i] * slope : x[i]) << "n " << n << " i " << i << " bcast " << slope_bcast;
        }
      }
    }
  }
  std::vector<float> inplace(x_all.begin(), x_all.begin() + 257);
  PReluFloat(inplace.data(), false, s_all.data(), true, inplace.data(), 257);
  for (size_t i = 0; i < inplace.size(); ++i) {
    ASSERT_EQ(inplace[i], x_all[i] < 0 ? x_all[i] * s_all[0] : x_all[i]) << i;
  }
}

TEST_P(ActivationSimdTest, PReluSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.0f, -0.0f, inf, -inf, nan, -2.0f, 3.0f};
  std::vector<float> y(x.size());
  const float slope = 0.25f;
  PReluFloat(x.data(), false, &slope, true, y.data(), static_cast<int64_t>(x.size()));
  EXPECT_EQ(y[0], 0.0f);
  EXPECT_TRUE(std::signbit(y[1])) << "-0 is not below zero: it stays -0";
  EXPECT_EQ(y[2], inf);
  EXPECT_EQ(y[3], -inf);
  EXPECT_TRUE(std::isnan(y[4]));
  EXPECT_EQ(y[5], -0.5f);
  EXPECT_EQ(y[6], 3.0f);
}

TEST_P(ActivationSimdTest, InPlace) {
  std::vector<float> x = RandomFloats(1031, -5, 5, 9);
  const std::vector<float> original = x;
  ActParams p;
  p.alpha = 0.1f;
  ActivationFloat(ActOp::kLeakyRelu, p, x.data(), x.data(), static_cast<int64_t>(x.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    ASSERT_EQ(x[i], original[i] < 0 ? original[i] * 0.1f : original[i]) << i;
  }
}

TEST(ActivationFunctionsTest, ScalarHeader) {
  EXPECT_EQ(activation::Relu(-2.0f), 0.0f);
  EXPECT_EQ(activation::Relu(3.0f), 3.0f);
  EXPECT_FLOAT_EQ(activation::LeakyRelu(-2.0f, 0.1f), -0.2f);
  EXPECT_FLOAT_EQ(activation::Sigmoid(0.0f), 0.5f);
  EXPECT_GT(activation::Sigmoid(-100.0f), 0.0f);  // no underflow to 0 from 1 - tiny
  EXPECT_EQ(activation::Sigmoid(100.0f), 1.0f);
  EXPECT_FLOAT_EQ(activation::HardSigmoid(1.0f, 0.2f, 0.5f), 0.7f);
  EXPECT_EQ(activation::HardSigmoid(10.0f, 0.2f, 0.5f), 1.0f);
  EXPECT_EQ(activation::Clip(5.0f, -1.0f, 2.0f), 2.0f);
  EXPECT_EQ(activation::Clip(0.0f, 3.0f, 2.0f), 2.0f);  // min > max: max
  EXPECT_TRUE(std::isnan(activation::Clip(NAN, -1.0f, 1.0f)));
  EXPECT_TRUE(std::isnan(activation::Relu(NAN)));
}

}  // namespace
}  // namespace onnxflow
