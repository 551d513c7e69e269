// The Highway loops against the scalar ones, over odd sizes and misaligned starts.
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "ops/ml/float_rows.h"

#include "ops/framework/every_target.h"

namespace onnxflow {
namespace ml {
namespace {

class FloatRows : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(FloatRows);

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-3.0f, 3.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(gen);
  return v;
}

TEST_P(FloatRows, MatchScalarOverSizesAndOffsets) {
  for (int64_t n : {1, 3, 17, 64, 1000, 1031}) {
    for (int64_t misalign : {0, 1, 3}) {
      std::vector<float> x = RandomFloats(n + misalign, static_cast<uint32_t>(n * 7 + misalign));
      if (n > 5) x[misalign + 5] = std::numeric_limits<float>::quiet_NaN();
      std::vector<float> off = RandomFloats(n + misalign, 11), sc = RandomFloats(n + misalign, 13);
      std::vector<float> got(n + misalign), want(n + misalign);
      const float* in = x.data() + misalign;

      BinarizeF32(in, n, 0.25f, got.data() + misalign);
      BinarizeScalar(in, n, 0.25f, want.data() + misalign);
      EXPECT_EQ(got, want) << "binarize n=" << n << " misalign=" << misalign;

      ScaleRowF32(in, n, off.data() + misalign, sc.data() + misalign, got.data() + misalign);
      ScaleRowScalar(in, n, off.data() + misalign, sc.data() + misalign, want.data() + misalign);
      for (int64_t i = 0; i < n; ++i) {
        const float a = got[misalign + i], b = want[misalign + i];
        EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << "scale row n=" << n << " i=" << i;
      }

      ScaleAllF32(in, n, 0.5f, -2.0f, got.data() + misalign);
      ScaleAllScalar(in, n, 0.5f, -2.0f, want.data() + misalign);
      for (int64_t i = 0; i < n; ++i) {
        const float a = got[misalign + i], b = want[misalign + i];
        EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << "scale all n=" << n << " i=" << i;
      }
    }
  }
}

}  // namespace
}  // namespace ml
}  // namespace onnxflow
