// The random source of the random family: a Mersenne Twister (MT19937) seeded like numpy's legacy
// RandomState(seed), and numpy's legacy algorithms on top of it (53-bit doubles, the polar
// Box-Muller normal with its cached second value, binomial inversion for n = 1). With the same seed
// our streams therefore equal np.random.RandomState(seed).rand / randn / binomial(1, p).
//
// A node with a `seed` attribute restarts its generator from that seed on every run, so its
// output is the same each run. Without one, each run draws a fresh seed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <random>

#include "ops/framework/kernel_info.h"

namespace onnxflow {

class NumpyRandom {
 public:
  explicit NumpyRandom(uint32_t seed) : mt_(seed) {}

  uint32_t NextUInt32() { return static_cast<uint32_t>(mt_()); }

  // Uniform in [0, 1) with 53 random bits (numpy's random_sample).
  double NextDouble() {
    const uint32_t a = NextUInt32() >> 5;
    const uint32_t b = NextUInt32() >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
  }

  // Standard normal by the polar method; every other call returns the cached partner value.
  double NextGauss() {
    if (has_gauss_) {
      has_gauss_ = false;
      return gauss_;
    }
    double x1, x2, r2;
    do {
      x1 = 2.0 * NextDouble() - 1.0;
      x2 = 2.0 * NextDouble() - 1.0;
      r2 = x1 * x1 + x2 * x2;
    } while (r2 >= 1.0 || r2 == 0.0);
    const double f = std::sqrt(-2.0 * std::log(r2) / r2);
    gauss_ = f * x1;
    has_gauss_ = true;
    return f * x2;
  }

  // One Bernoulli(p) draw, 0 <= p <= 1, exactly as numpy's binomial(1, p).
  int64_t NextBernoulli(double p) {
    if (p == 0.0) return 0;
    if (p <= 0.5) return BinomialInversion1(p);
    return 1 - BinomialInversion1(1.0 - p);
  }

 private:
  // numpy's inversion algorithm for binomial(n = 1, p).
  int64_t BinomialInversion1(double p) {
    const double q = 1.0 - p;
    const double qn = std::exp(std::log(q));
    const double np = p;
    const int64_t bound = std::min<int64_t>(1, static_cast<int64_t>(np + 10.0 * std::sqrt(np * q + 1)));
    int64_t x = 0;
    double px = qn;
    double u = NextDouble();
    while (u > px) {
      ++x;
      if (x > bound) {
        x = 0;
        px = qn;
        u = NextDouble();
      } else {
        u -= px;
        px = ((1 - x + 1) * p * px) / (x * q);
      }
    }
    return x;
  }

  std::mt19937 mt_;  // same initialization (init_genrand) and output as numpy's MT19937
  bool has_gauss_ = false;
  double gauss_ = 0.0;
};

// The `seed` attribute of a random op, or nothing.
inline std::optional<uint32_t> ReadSeed(const KernelInfo& info) {
  if (!info.has_attribute("seed")) return std::nullopt;
  const float seed = info.GetFloat("seed", 0.0f);
  if (!(std::fabs(seed) < 9.2e18f)) {  // NaN, Inf or beyond int64: seed with the float's bits
    uint32_t bits = 0;
    std::memcpy(&bits, &seed, sizeof(bits));
    return bits;
  }
  return static_cast<uint32_t>(static_cast<int64_t>(seed));  // numpy: int(seed)
}

// The seed for one run: the attribute's, else a fresh one.
uint32_t RunSeed(const std::optional<uint32_t>& seed);

}  // namespace onnxflow
