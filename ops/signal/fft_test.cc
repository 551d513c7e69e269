#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/signal/fft.h"

namespace onnxflow {
namespace signal {
namespace {

std::vector<Complex> Random(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  std::vector<Complex> v(static_cast<size_t>(n));
  for (auto& c : v) c = Complex(d(gen), d(gen));
  return v;
}

// Radix-2, direct and Bluestein lengths against the O(n^2) sum, both directions.
TEST(Fft, MatchesNaiveDftForEveryLengthKind) {
  for (int64_t n : {1, 2, 3, 4, 5, 7, 8, 12, 16, 17, 31, 64, 65, 97, 100, 127, 128, 243, 1000, 1024}) {
    for (bool inverse : {false, true}) {
      const auto x = Random(n, static_cast<uint32_t>(n));
      const auto expected = NaiveDft(x, inverse);
      auto y = x;
      std::vector<Complex> scratch;
      FftPlan(n).Transform(y.data(), inverse, &scratch);
      double worst = 0;
      for (int64_t k = 0; k < n; ++k) worst = std::max(worst, std::abs(y[k] - expected[k]));
      EXPECT_LT(worst, 1e-9 * std::max<double>(1, static_cast<double>(n))) << "n=" << n << " inverse=" << inverse;
    }
  }
}

TEST(Fft, ForwardThenInverseIsNTimesTheInput) {
  for (int64_t n : {6, 1031, 4096}) {
    const auto x = Random(n, 5);
    auto y = x;
    std::vector<Complex> scratch;
    const FftPlan plan(n);
    plan.Transform(y.data(), false, &scratch);
    plan.Transform(y.data(), true, &scratch);
    for (int64_t k = 0; k < n; ++k) ASSERT_LT(std::abs(y[k] / static_cast<double>(n) - x[k]), 1e-12) << n;
  }
}

TEST(Fft, ImpulseAndConstant) {
  // The transform of an impulse is all ones; of a constant, n at bin 0.
  std::vector<Complex> x(10, Complex(0, 0)), scratch;
  x[0] = 1;
  FftPlan(10).Transform(x.data(), false, &scratch);
  for (const auto& c : x) EXPECT_LT(std::abs(c - Complex(1, 0)), 1e-12);
  std::vector<Complex> ones(100, Complex(1, 0));
  FftPlan(100).Transform(ones.data(), false, &scratch);
  EXPECT_LT(std::abs(ones[0] - Complex(100, 0)), 1e-9);
  for (int k = 1; k < 100; ++k) EXPECT_LT(std::abs(ones[k]), 1e-9);
}

}  // namespace
}  // namespace signal
}  // namespace onnxflow
