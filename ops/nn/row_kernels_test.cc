// The SIMD row kernels against plain loops, over odd lengths and misaligned starts.
#include "ops/nn/row_kernels.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/every_target.h"

namespace onnxflow {
namespace {

class RowKernels : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(RowKernels);

const int64_t kSizes[] = {0, 1, 3, 15, 16, 17, 31, 1000, 1037};
const int64_t kOffsets[] = {0, 1, 3};

std::vector<float> RandomData(int64_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-4, 4);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

TEST_P(RowKernels, MaxAndSums) {
  for (int64_t n : kSizes) {
    for (int64_t off : kOffsets) {
      std::vector<float> buf = RandomData(n + off, static_cast<uint32_t>(n * 7 + off));
      const float* x = buf.data() + off;
      float max = -std::numeric_limits<float>::infinity();
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < n; ++i) {
        max = std::max(max, x[i]);
        sum += x[i];
        sq += (x[i] - 0.5) * (x[i] - 0.5);
      }
      EXPECT_EQ(RowMax(x, n), max) << n << " " << off;
      EXPECT_NEAR(RowSum(x, n), sum, 1e-4 * (1 + n)) << n;
      EXPECT_NEAR(RowSumSquaredDiff(x, 0.5f, n), sq, 1e-4 * (1 + sq)) << n;
    }
  }
}

// RowSumWide accumulates in double: exact where a float accumulator (any lane order) is not, and
// within double rounding of a plain loop elsewhere; NaN and infinities carry through.
TEST_P(RowKernels, WideSumsAreDouble) {
  for (int64_t n : kSizes) {
    for (int64_t off : kOffsets) {
      std::vector<float> buf = RandomData(n + off, static_cast<uint32_t>(n * 5 + off));
      const float* x = buf.data() + off;
      double sum = 0, sq = 0;
      for (int64_t i = 0; i < n; ++i) sum += x[i], sq += static_cast<double>(x[i]) * x[i];
      EXPECT_NEAR(RowSumWide(x, n, false), sum, 1e-12 * (1 + n)) << n << " " << off;
      EXPECT_NEAR(RowSumWide(x, n, true), sq, 1e-12 * (1 + sq)) << n << " " << off;
    }
  }
  // 2^24 in every lane's first slot, then ones, then -2^24: a float lane would drop every one.
  for (int64_t n : {int64_t{64}, int64_t{1037}}) {
    std::vector<float> x(n, 1.0f);
    for (int64_t i = 0; i < 16; ++i) x[i] = 16777216.0f, x[n - 1 - i] = -16777216.0f;
    EXPECT_EQ(RowSumWide(x.data(), n, false), static_cast<double>(n - 32)) << n;
    std::vector<float> odd(n, 4097.0f);  // 4097^2 = 16785409 needs 25 bits
    EXPECT_EQ(RowSumWide(odd.data(), n, true), 16785409.0 * n) << n;
  }
  std::vector<float> special = RandomData(40, 3);
  special[33] = std::numeric_limits<float>::infinity();
  EXPECT_EQ(RowSumWide(special.data(), 40, false), std::numeric_limits<double>::infinity());
  special[5] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(RowSumWide(special.data(), 40, true)));
  EXPECT_EQ(RowSumWide(nullptr, 0, true), 0.0);
}

// RowExtreme: max and min over odd lengths and misaligned starts, the identity for an empty row,
// and NaN wherever one sits (in a whole vector, in the tail).
TEST_P(RowKernels, ExtremePropagatesNan) {
  for (int64_t n : kSizes) {
    for (int64_t off : kOffsets) {
      std::vector<float> buf = RandomData(n + off, static_cast<uint32_t>(n * 7 + off));
      const float* x = buf.data() + off;
      float mx = -std::numeric_limits<float>::infinity(), mn = std::numeric_limits<float>::infinity();
      for (int64_t i = 0; i < n; ++i) mx = std::max(mx, x[i]), mn = std::min(mn, x[i]);
      EXPECT_EQ(RowExtreme(x, n, true), mx) << n << " " << off;
      EXPECT_EQ(RowExtreme(x, n, false), mn) << n << " " << off;
      for (int64_t at : {int64_t{0}, n / 2, n - 1}) {
        if (n == 0) continue;
        std::vector<float> with_nan = buf;
        with_nan[off + at] = std::numeric_limits<float>::quiet_NaN();
        EXPECT_TRUE(std::isnan(RowExtreme(with_nan.data() + off, n, true))) << n << " at " << at;
        EXPECT_TRUE(std::isnan(RowExtreme(with_nan.data() + off, n, false))) << n << " at " << at;
      }
    }
  }
}

// RowFind: the first and the last match, in a whole vector or the tail, and -1 for none or NaN.
TEST_P(RowKernels, FindFirstAndLast) {
  for (int64_t n : kSizes) {
    for (int64_t off : kOffsets) {
      std::vector<float> buf(n + off, 1.0f);
      float* x = buf.data() + off;
      EXPECT_EQ(RowFind(x, n, 2.0f, false), -1) << n;
      EXPECT_EQ(RowFind(x, n, 2.0f, true), -1) << n;
      EXPECT_EQ(RowFind(x, n, std::numeric_limits<float>::quiet_NaN(), false), -1) << n;
      if (n == 0) continue;
      for (int64_t a : {int64_t{0}, n / 3, n - 1}) {
        for (int64_t b : {a, std::min(n - 1, a + 1), n - 1}) {
          std::fill(buf.begin(), buf.end(), 1.0f);
          x[a] = x[b] = 2.0f;
          EXPECT_EQ(RowFind(x, n, 2.0f, false), std::min(a, b)) << n << " " << a << " " << b;
          EXPECT_EQ(RowFind(x, n, 2.0f, true), std::max(a, b)) << n << " " << a << " " << b;
        }
      }
    }
  }
}

TEST_P(RowKernels, ExpShiftSumAffineNormalize) {
  for (int64_t n : kSizes) {
    for (int64_t off : kOffsets) {
      std::vector<float> buf = RandomData(n + off, static_cast<uint32_t>(n * 13 + off));
      std::vector<float> scale = RandomData(n + off, 5), bias = RandomData(n + off, 6);
      const float* x = buf.data() + off;
      std::vector<float> y(n + off + 1, 42.0f);
      float* out = y.data() + off;

      double ref_sum = 0;
      const float s = ExpShiftSum(x, 1.5f, out, n);
      for (int64_t i = 0; i < n; ++i) {
        const double e = std::exp(static_cast<double>(x[i]) - 1.5);
        ref_sum += e;
        EXPECT_NEAR(out[i], e, 1e-5 * e + 1e-7) << n << " " << i;
      }
      EXPECT_NEAR(s, ref_sum, 1e-5 * ref_sum + 1e-6);
      EXPECT_EQ(y[off + n], 42.0f) << "wrote past the row";

      AffineRow(x, 2.0f, -1.0f, out, n);
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(out[i], x[i] * 2.0f - 1.0f, 1e-5);

      NormalizeRow(x, 0.25f, 3.0f, scale.data() + off, bias.data() + off, out, n);
      for (int64_t i = 0; i < n; ++i) {
        EXPECT_NEAR(out[i], (x[i] - 0.25f) * 3.0f * scale[off + i] + bias[off + i], 1e-4);
      }
      NormalizeRow(x, 0.25f, 3.0f, nullptr, nullptr, out, n);
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(out[i], (x[i] - 0.25f) * 3.0f, 1e-4);
      EXPECT_EQ(y[off + n], 42.0f);
    }
  }
}

// The softmax exp over the whole range it promises: within 2 ulp (plus the reference's own
// rounding) where exp is a normal float, 0 below, -inf to 0, NaN kept; the scale applied exactly.
TEST_P(RowKernels, ExpShiftSumRange) {
  std::vector<float> x;
  for (float v = -87.3f; v <= 88.0f; v += 0.0137f) x.push_back(v);
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<float> y(n);
  ExpShiftSum(x.data(), 0.0f, y.data(), n);
  double worst = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = std::exp(static_cast<double>(x[i]));
    worst = std::max(worst, std::fabs(y[i] - e) / e);
  }
  EXPECT_LT(worst, 2.5 * std::numeric_limits<float>::epsilon());

  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> edge = {-inf, -1000.0f, -87.4f, 0.0f, std::nanf("")}, out(edge.size());
  const float sum = ExpShiftSum(edge.data(), 0.0f, out.data(), 4);
  EXPECT_EQ(out[0], 0.0f);
  EXPECT_EQ(out[1], 0.0f);
  EXPECT_EQ(out[2], 0.0f);
  EXPECT_EQ(out[3], 1.0f);
  EXPECT_EQ(sum, 1.0f);
  ExpShiftSum(edge.data() + 4, 0.0f, out.data() + 4, 1);
  EXPECT_TRUE(std::isnan(out[4]));

  // exp(x * 0.125 - 2), the scale inside the fused multiply-add: one rounding of the argument.
  std::vector<float> scaled(n);
  const float total = ExpShiftSum(x.data(), 2.0f, scaled.data(), n, 0.125f);
  double ref_total = 0;
  for (int64_t i = 0; i < n; ++i) {
    const double e = std::exp(static_cast<double>(std::fmaf(x[i], 0.125f, -2.0f)));
    ref_total += e;
    EXPECT_NEAR(scaled[i], e, 3 * std::numeric_limits<float>::epsilon() * e) << x[i];
  }
  EXPECT_NEAR(total, ref_total, 1e-5 * ref_total);
}

TEST_P(RowKernels, StridedSoftmaxSteps) {
  for (int64_t n : kSizes) {
    for (int64_t off : kOffsets) {
      std::vector<float> xb = RandomData(n + off, static_cast<uint32_t>(5 * n + off));
      std::vector<float> mb = RandomData(n + off, static_cast<uint32_t>(n + 11 * off));
      const float* x = xb.data() + off;
      std::vector<float> m(mb.begin() + off, mb.end()), s(n, 1.0f), y(n + 1, 42.0f);
      const std::vector<float> m0 = m;
      MaxInto(x, m.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_EQ(m[i], std::max(m0[i], x[i]));
      ExpSubAccumulate(x, m.data(), y.data(), s.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        const double e = std::exp(static_cast<double>(x[i]) - m[i]);
        EXPECT_NEAR(y[i], e, 1e-5 * e + 1e-7);
        EXPECT_NEAR(s[i], 1 + e, 1e-5 * (1 + e));
      }
      EXPECT_EQ(y[n], 42.0f);
      const std::vector<float> y0 = y;
      DivideInto(y.data(), s.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], y0[i] / s[i], 1e-6);
      SubtractLogInto(x, m.data(), s.data(), y.data(), n);
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(y[i], x[i] - m[i] - std::log(s[i]), 1e-5);
      EXPECT_EQ(y[n], 42.0f);
    }
  }
}

TEST_P(RowKernels, LrnHelpers) {
  for (int64_t n : kSizes) {
    for (int64_t off : kOffsets) {
      std::vector<float> buf = RandomData(n + off, static_cast<uint32_t>(n + 3 * off));
      const float* x = buf.data() + off;
      std::vector<float> acc(n + off, 0.5f);
      AddSquares(x, acc.data() + off, n);
      for (int64_t i = 0; i < n; ++i) EXPECT_NEAR(acc[off + i], 0.5f + x[i] * x[i], 1e-5);
      std::vector<float> y(n + off + 1, 42.0f);
      ScaleByPower(x, acc.data() + off, 2.0f, 1e-3f, -0.75f, y.data() + off, n);
      for (int64_t i = 0; i < n; ++i) {
        const double expected = x[i] * std::pow(2.0 + 1e-3 * acc[off + i], -0.75);
        EXPECT_NEAR(y[off + i], expected, 1e-5 * std::fabs(expected) + 1e-7) << n << " " << i;
      }
      EXPECT_EQ(y[off + n], 42.0f);
    }
  }
}

// The product is rounded before the sum: x * a = 1 + 3 * 2^-23 + 2^-45 exactly, which rounds to
// 1 + 3 * 2^-23; minus 1 that is 3 * 2^-23, where a fused multiply-add would give 3 * 2^-23 + 2^-45.
TEST_P(RowKernels, AffineRoundsTheProductFirst) {
  const float x = 1.0f + 0x1p-23f, a = 1.0f + 0x1p-22f;
  std::vector<float> row(37, x), out(37);
  AffineRow(row.data(), a, -1.0f, out.data(), 37);
  for (int i = 0; i < 37; ++i) ASSERT_EQ(out[i], 0x3p-23f) << i;
}

TEST_P(RowKernels, InPlace) {
  std::vector<float> x = RandomData(37, 9), ref = x;
  AffineRow(x.data(), 0.5f, 1.0f, x.data(), 37);
  for (int i = 0; i < 37; ++i) EXPECT_NEAR(x[i], ref[i] * 0.5f + 1.0f, 1e-6);
}

TEST_P(RowKernels, EmptyRowMaxIsMinusInfinity) {
  EXPECT_EQ(RowMax(nullptr, 0), -std::numeric_limits<float>::infinity());
  EXPECT_EQ(RowSum(nullptr, 0), 0.0);
}

}  // namespace
}  // namespace onnxflow
