#include "ops/cast/half_simd.h"

#include <cmath>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/every_target.h"

namespace onnxflow {
namespace {

class HalfSimd : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(HalfSimd);

bool SameHalf(uint16_t a, uint16_t b) {
  const bool a_nan = (a & 0x7C00) == 0x7C00 && (a & 0x3FF) != 0;
  const bool b_nan = (b & 0x7C00) == 0x7C00 && (b & 0x3FF) != 0;
  return a_nan || b_nan ? a_nan == b_nan : a == b;
}

// Floats around every interesting spot: ties, subnormal halves, overflow, zeros, inf, NaN.
std::vector<float> TestFloats() {
  std::vector<float> v;
  for (uint32_t h = 0; h < 0x10000; h += 3) {
    const float f = HalfToFloat(static_cast<uint16_t>(h));
    v.push_back(f);
    if (std::isfinite(f)) {
      v.push_back(std::nextafter(f, 1e9f));
      v.push_back(std::nextafter(f, -1e9f));
      const float next = HalfToFloat(static_cast<uint16_t>(h + 1));
      if (std::isfinite(next)) v.push_back((f + next) / 2);  // exact tie in float
    }
  }
  for (float f : {65504.f, 65519.f, 65520.f, 1e6f, -1e6f, 1e-10f, 5.9604645e-08f, 2.9802322e-08f, 2.9802326e-08f})
    v.push_back(f);
  return v;
}

TEST_P(HalfSimd, FloatToHalfMatchesScalarAtOddSizesAndOffsets) {
  const std::vector<float> values = TestFloats();
  for (size_t offset : {size_t{0}, size_t{1}, size_t{3}}) {
    for (int64_t n : std::vector<int64_t>{1, 3, 17, 1000, static_cast<int64_t>(values.size() - offset)}) {
      std::vector<uint16_t> out(n + 1, 0xABCD);
      FloatToHalfArray(values.data() + offset, out.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_TRUE(SameHalf(out[i], FloatToHalf(values[offset + i])))
            << "x=" << values[offset + i] << " got " << out[i] << " want " << FloatToHalf(values[offset + i]);
      }
      EXPECT_EQ(out[n], 0xABCD);  // nothing written past the end
    }
  }
}

TEST_P(HalfSimd, HalfToFloatIsExactForEveryPattern) {
  std::vector<uint16_t> all(0x10001);
  for (uint32_t h = 0; h < 0x10000; ++h) all[h + 1] = static_cast<uint16_t>(h);
  for (size_t offset : {size_t{0}, size_t{1}}) {
    const int64_t n = 0x10000;
    std::vector<float> out(n);
    HalfToFloatArray(all.data() + offset, out.data(), n);
    for (int64_t i = 0; i < n; ++i) {
      const float want = HalfToFloat(all[offset + i]);
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(out[i])) << i;
      } else {
        ASSERT_EQ(FloatBits(out[i]), FloatBits(want)) << i;
      }
    }
  }
}

TEST_P(HalfSimd, BFloat16ToFloatIsExactForEveryPattern) {
  std::vector<uint16_t> all(0x10001);
  for (uint32_t h = 0; h < 0x10000; ++h) all[h + 1] = static_cast<uint16_t>(h);
  for (size_t offset : {size_t{0}, size_t{1}}) {
    for (int64_t n : std::vector<int64_t>{1, 7, 19, 0x10000}) {
      std::vector<float> out(n + 1, 123.0f);
      BFloat16ToFloatArray(all.data() + offset, out.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(FloatBits(out[i]), FloatBits(BFloat16ToFloat(all[offset + i]))) << i;
      EXPECT_EQ(out[n], 123.0f);  // nothing written past the end
    }
  }
}

// Every bfloat16 value, its neighbours in float, the ties halfway to the next one (both parities
// of the kept bit), the largest floats (rounding up to infinity) and NaNs whose payload sits only
// in the dropped half (a NaN must stay a NaN, not round into infinity or zero).
TEST_P(HalfSimd, FloatToBFloat16MatchesScalarBitForBit) {
  std::vector<float> values;
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const uint32_t u = h << 16;
    for (uint32_t low : {0u, 1u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu}) values.push_back(BitsToFloat(u | low));
  }
  for (size_t offset : {size_t{0}, size_t{3}}) {
    for (int64_t n : std::vector<int64_t>{1, 5, 33, static_cast<int64_t>(values.size() - offset)}) {
      std::vector<uint16_t> out(n + 1, 0xABCD);
      FloatToBFloat16Array(values.data() + offset, out.data(), n);
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(out[i], FloatToBFloat16(values[offset + i])) << "bits " << std::hex << FloatBits(values[offset + i]);
      }
      EXPECT_EQ(out[n], 0xABCD);
    }
  }
  uint16_t nan_out = 0;
  const float nan_low_payload = BitsToFloat(0x7f800001u);
  FloatToBFloat16Array(&nan_low_payload, &nan_out, 1);
  EXPECT_TRUE(std::isnan(BFloat16ToFloat(nan_out)));
}

}  // namespace
}  // namespace onnxflow
