#include "ops/vec/vec_ops.h"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/every_target.h"

namespace onnxflow {
namespace vec {
namespace {

class VecOps : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(VecOps);

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// The SIMD kernels against the plain loops, over odd lengths and unaligned starts.
TEST_P(VecOps, DotRowsMatchesScalar) {
  for (int64_t n : {1, 3, 17, 64, 1000, 1031}) {
    for (int64_t offset : {0, 1, 3}) {
      const int64_t rows = 5, stride = n + 2;
      std::vector<float> x = Random(n + offset, 1), m = Random(rows * stride + offset, 2);
      std::vector<float> got(rows), want(rows);
      DotRowsF32(x.data() + offset, m.data() + offset, stride, rows, n, got.data());
      DotRowsScalar(x.data() + offset, m.data() + offset, stride, rows, n, want.data());
      for (int64_t r = 0; r < rows; ++r) {
        EXPECT_NEAR(want[r], got[r], 1e-4 * std::sqrt(static_cast<double>(n))) << "n=" << n << " offset=" << offset;
      }
    }
  }
}

TEST_P(VecOps, AccumulateRowsMatchesScalar) {
  for (int64_t n : {1, 3, 17, 64, 1000, 1031}) {
    for (int64_t offset : {0, 1, 3}) {
      const int64_t rows = 7, stride = n + 1;
      std::vector<float> w = Random(rows + offset, 3), m = Random(rows * stride + offset, 4);
      w[offset + 2] = 0.0f;  // a masked key
      std::vector<float> got = Random(n + offset, 5);
      std::vector<float> want = got;
      AccumulateRowsF32(w.data() + offset, m.data() + offset, stride, rows, n, got.data() + offset);
      AccumulateRowsScalar(w.data() + offset, m.data() + offset, stride, rows, n, want.data() + offset);
      for (int64_t i = 0; i < n + offset; ++i) EXPECT_NEAR(want[i], got[i], 1e-5) << "n=" << n << " i=" << i;
    }
  }
}

TEST_P(VecOps, ExpShiftedMatchesScalar) {
  for (int64_t n : {1, 3, 17, 64, 1000, 1031}) {
    for (int64_t offset : {0, 1, 3}) {
      std::vector<float> got = Random(n + offset, 6);
      for (float& x : got) x *= 30.0f;
      got[offset] = -INFINITY;  // a masked key
      std::vector<float> want = got;
      const float sum_got = ExpShiftedF32(got.data() + offset, n, 5.0f);
      const float sum_want = ExpShiftedScalar(want.data() + offset, n, 5.0f);
      EXPECT_NEAR(sum_want, sum_got, 1e-5 * sum_want);
      EXPECT_EQ(0.0f, got[offset]);
      for (int64_t i = offset; i < n + offset; ++i) EXPECT_NEAR(want[i], got[i], 2e-6 * want[i] + 1e-30) << i;
    }
  }
}

TEST_P(VecOps, HandComputed) {
  const float x[3] = {1, 2, 3};
  const float m[6] = {1, 0, 0, 4, 5, 6};
  float out[2];
  DotRows(x, m, 3, 2, 3, out);
  EXPECT_FLOAT_EQ(1.0f, out[0]);
  EXPECT_FLOAT_EQ(32.0f, out[1]);
  const double w[2] = {2, -1};
  const double md[4] = {1, 2, 3, 4};
  double acc[2] = {10, 10};
  AccumulateRows(w, md, 2, 2, 2, acc);
  EXPECT_DOUBLE_EQ(9.0, acc[0]);
  EXPECT_DOUBLE_EQ(10.0, acc[1]);
}

}  // namespace
}  // namespace vec
}  // namespace onnxflow
