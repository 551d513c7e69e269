#include "ops/rnn/vec_ops.h"

#include <cmath>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace onnxflow {
namespace rnn {
namespace {

std::vector<float> Random(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(gen);
  return v;
}

// The Highway kernel against the plain loop, over odd lengths and unaligned starts.
TEST(RnnVecOps, DotRowsMatchesScalar) {
  for (int64_t n : {1, 3, 17, 64, 1000, 1031}) {
    for (int64_t offset : {0, 1, 3}) {
      const int64_t rows = 6, stride = n + 3;
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

TEST(RnnVecOps, HandComputed) {
  const double x[2] = {1, -2};
  const double m[4] = {3, 4, 5, 6};
  double out[2];
  DotRows(x, m, 2, 2, 2, out);
  EXPECT_DOUBLE_EQ(-5.0, out[0]);
  EXPECT_DOUBLE_EQ(-7.0, out[1]);
}

}  // namespace
}  // namespace rnn
}  // namespace onnxflow
