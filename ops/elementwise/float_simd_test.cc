// The Highway float32 paths against plain scalar references, over odd sizes, misaligned
// pointers, broadcast operands and special values.
#include "ops/elementwise/float_simd.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "ops/elementwise/test_util.h"
#include "ops/framework/every_target.h"

namespace onnxflow {
namespace {

class FloatSimdTest : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(FloatSimdTest);

using testing_util::OddSizes;
using testing_util::RandomFloats;

bool Close(float expected, float actual, float rtol, float atol) {
  if (std::isnan(expected)) return std::isnan(actual);
  if (std::isinf(expected)) return expected == actual;
  return std::fabs(expected - actual) <= atol + rtol * std::fabs(expected);
}

float BinaryRef(FloatBinaryOp op, float a, float b) {
  switch (op) {
    case FloatBinaryOp::kAdd:
      return a + b;
    case FloatBinaryOp::kSub:
      return a - b;
    case FloatBinaryOp::kMul:
      return a * b;
    case FloatBinaryOp::kDiv:
      return a / b;
    case FloatBinaryOp::kMax:
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    case FloatBinaryOp::kMin:
      return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
  }
  return 0;
}

TEST_P(FloatSimdTest, BinaryMatchesScalarOverSizesOffsetsAndBroadcast) {
  const std::vector<float> a_all = RandomFloats(1100, -10, 10, 1);
  std::vector<float> b_all = RandomFloats(1100, -10, 10, 2);
  for (FloatBinaryOp op : {FloatBinaryOp::kAdd, FloatBinaryOp::kSub, FloatBinaryOp::kMul, FloatBinaryOp::kDiv,
                           FloatBinaryOp::kMax, FloatBinaryOp::kMin}) {
    for (int64_t n : OddSizes()) {
      for (int offset : {0, 1, 3}) {
        for (int mode = 0; mode < 4; ++mode) {
          const bool ab = mode & 1, bb = mode & 2;
          const float* a = a_all.data() + offset;
          const float* b = b_all.data() + 2 * offset % 5;
          std::vector<float> out(n + 2, -777.0f);
          FloatBinary(op, a, ab, b, bb, out.data() + 1, n);
          ASSERT_EQ(out[0], -777.0f);
          ASSERT_EQ(out[n + 1], -777.0f) << "wrote past the end";
          for (int64_t i = 0; i < n; ++i) {
            const float want = BinaryRef(op, ab ? a[0] : a[i], bb ? b[0] : b[i]);
            ASSERT_TRUE(Close(want, out[i + 1], 1e-6f, 0))
                << "op " << static_cast<int>(op) << " n " << n << " i " << i << ": " << out[i + 1] << " vs " << want;
          }
        }
      }
    }
  }
}

// NaN in either operand, in the vector body and the tail (runs under 8 are done inline, without
// the SIMD code: 37 reaches both).
TEST_P(FloatSimdTest, MaxMinPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (int64_t n : {5, 37}) {
    std::vector<float> a(n), b(n), out(n);
    for (int64_t i = 0; i < n; ++i) {
      a[i] = i % 3 == 0 ? nan : static_cast<float>(i);
      b[i] = i % 4 == 1 ? nan : static_cast<float>(n - i);
    }
    for (FloatBinaryOp op : {FloatBinaryOp::kMax, FloatBinaryOp::kMin}) {
      FloatBinary(op, a.data(), false, b.data(), false, out.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const float want = BinaryRef(op, a[i], b[i]);
        ASSERT_TRUE(Close(want, out[i], 0, 0)) << "op " << static_cast<int>(op) << " n " << n << " i " << i;
      }
    }
  }
}

struct UnaryCase {
  FloatUnaryOp op;
  float (*ref)(float);
  float lo, hi;
  float rtol, atol;
};

TEST_P(FloatSimdTest, UnaryMatchesStdOverSizesAndOffsets) {
  const std::vector<UnaryCase> cases = {
      {FloatUnaryOp::kAbs, [](float x) { return std::fabs(x); }, -10, 10, 0, 0},
      {FloatUnaryOp::kNeg, [](float x) { return -x; }, -10, 10, 0, 0},
      {FloatUnaryOp::kSqrt, [](float x) { return std::sqrt(x); }, 0, 100, 1e-7f, 0},
      {FloatUnaryOp::kReciprocal, [](float x) { return 1.0f / x; }, 0.1f, 10, 1e-7f, 0},
      // Below -87 the result is subnormal, where one ulp (denorm_min) is up to 1e-6 relative; targets
      // without FMA (SSE4, the portable one) round there differently.
      {FloatUnaryOp::kExp, [](float x) { return std::exp(x); }, -100, 88, 3e-7f,
       std::numeric_limits<float>::denorm_min()},
      {FloatUnaryOp::kLog, [](float x) { return std::log(x); }, 1e-30f, 1e30f, 3e-7f, 1e-7f},
      {FloatUnaryOp::kErf, [](float x) { return std::erf(x); }, -5, 5, 1e-6f, 1e-7f},
      {FloatUnaryOp::kTanh, [](float x) { return std::tanh(x); }, -12, 12, 3e-7f, 1e-7f},
      {FloatUnaryOp::kSigmoid, [](float x) { return static_cast<float>(1.0 / (1.0 + std::exp(-double{x}))); }, -90, 30,
       1e-6f, 0},
      {FloatUnaryOp::kCeil, [](float x) { return std::ceil(x); }, -10, 10, 0, 0},
      {FloatUnaryOp::kFloor, [](float x) { return std::floor(x); }, -10, 10, 0, 0},
      {FloatUnaryOp::kRound, [](float x) { return std::nearbyint(x); }, -10, 10, 0, 0},
  };
  for (const UnaryCase& c : cases) {
    const std::vector<float> x_all = RandomFloats(1100, c.lo, c.hi, 3);
    for (int64_t n : OddSizes()) {
      for (int offset : {0, 1, 2}) {
        const float* x = x_all.data() + offset;
        std::vector<float> y(n + 1, -777.0f);
        FloatUnary(c.op, x, y.data(), n);
        ASSERT_EQ(y[n], -777.0f) << "wrote past the end";
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_TRUE(Close(c.ref(x[i]), y[i], c.rtol, c.atol))
              << "op " << static_cast<int>(c.op) << " x " << x[i] << ": " << y[i] << " vs " << c.ref(x[i]);
        }
      }
    }
  }
}

TEST_P(FloatSimdTest, UnarySpecialValues) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {0.0f, -0.0f, inf, -inf, nan, -1.0f, 1e-40f, 200.0f, -200.0f, 2.5f, -2.5f, 0.5f};
  const std::vector<std::pair<FloatUnaryOp, float (*)(float)>> ops = {
      {FloatUnaryOp::kExp, [](float v) { return std::exp(v); }},
      {FloatUnaryOp::kLog, [](float v) { return std::log(v); }},
      {FloatUnaryOp::kErf, [](float v) { return std::erf(v); }},
      {FloatUnaryOp::kTanh, [](float v) { return std::tanh(v); }},
      {FloatUnaryOp::kSigmoid, [](float v) { return static_cast<float>(1.0 / (1.0 + std::exp(-double{v}))); }},
      {FloatUnaryOp::kSqrt, [](float v) { return std::sqrt(v); }},
      {FloatUnaryOp::kRound, [](float v) { return std::nearbyint(v); }},
  };
  for (const auto& [op, ref] : ops) {
    std::vector<float> y(x.size());
    FloatUnary(op, x.data(), y.data(), static_cast<int64_t>(x.size()));
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_TRUE(Close(ref(x[i]), y[i], 1e-6f, 1e-37f))
          << "op " << static_cast<int>(op) << " x " << x[i] << ": " << y[i] << " vs " << ref(x[i]);
    }
  }
}

}  // namespace
}  // namespace onnxflow
