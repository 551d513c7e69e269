#include "ops/quant/quant_simd.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/every_target.h"

namespace onnxflow {
namespace {

class QuantSimd : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(QuantSimd);

template <typename Q>
Q ScalarQuantize(float x, float scale, float zero_point) {
  const double lo = std::numeric_limits<Q>::min(), hi = std::numeric_limits<Q>::max();
  double r = std::nearbyint(static_cast<double>(x / scale)) + zero_point;
  if (std::isnan(r) || r < lo) r = lo;
  if (r > hi) r = hi;
  return static_cast<Q>(r);
}

std::vector<float> Inputs(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37) % 1201) * 0.25f - 150.f;  // many exact .5 ties
  if (n > 5) {
    v[1] = std::numeric_limits<float>::quiet_NaN();
    v[2] = std::numeric_limits<float>::infinity();
    v[3] = -std::numeric_limits<float>::infinity();
    v[4] = 1e30f;
  }
  return v;
}

TEST_P(QuantSimd, QuantizeMatchesScalarAtOddSizesAndOffsets) {
  const std::vector<float> x = Inputs(3000);
  for (int64_t offset : {0, 1, 3}) {
    for (int64_t n : {1, 3, 17, 1000, 2997}) {
      for (float zp : {0.f, 7.f, -3.f}) {
        std::vector<uint8_t> u(n + 1, 0xEE);
        std::vector<int8_t> s(n + 1, 0x5A);
        QuantizeFloatToUint8(x.data() + offset, n, 0.5f, zp + 128, u.data());
        QuantizeFloatToInt8(x.data() + offset, n, 0.5f, zp, s.data());
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(u[i], ScalarQuantize<uint8_t>(x[offset + i], 0.5f, zp + 128)) << x[offset + i];
          ASSERT_EQ(s[i], ScalarQuantize<int8_t>(x[offset + i], 0.5f, zp)) << x[offset + i];
        }
        EXPECT_EQ(u[n], 0xEE);
        EXPECT_EQ(s[n], 0x5A);
      }
    }
  }
}

// Integer sums computed in float (the depthwise ConvInteger) back to int32, up to 2^24 either way.
TEST_P(QuantSimd, IntegralFloatToInt32IsExact) {
  for (int64_t n : {1, 7, 16, 33, 1001}) {
    std::vector<float> x(n);
    for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i % 2 ? -1 : 1) * ((i * 65025) % (1 << 24)));
    std::vector<int32_t> y(n + 1, 0x5A5A5A5A);
    IntegralFloatToInt32(x.data(), n, y.data());
    for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], static_cast<int32_t>(x[i])) << i;
    EXPECT_EQ(y[n], 0x5A5A5A5A);
  }
}

// 16 bits: a scale that puts the inputs past both ends of the range, and well inside it.
TEST_P(QuantSimd, Quantize16MatchesScalarAtOddSizesAndOffsets) {
  const std::vector<float> x = Inputs(3000);
  for (int64_t offset : {0, 1, 3}) {
    for (int64_t n : {1, 3, 17, 1000, 2997}) {
      for (float scale : {0.001f, 0.5f}) {
        std::vector<uint16_t> u(n + 1, 0xEEEE);
        std::vector<int16_t> s(n + 1, 0x5A5A);
        QuantizeFloatToUint16(x.data() + offset, n, scale, 32768.f + 7.f, u.data());
        QuantizeFloatToInt16(x.data() + offset, n, scale, -3.f, s.data());
        for (int64_t i = 0; i < n; ++i) {
          ASSERT_EQ(u[i], ScalarQuantize<uint16_t>(x[offset + i], scale, 32768.f + 7.f)) << x[offset + i];
          ASSERT_EQ(s[i], ScalarQuantize<int16_t>(x[offset + i], scale, -3.f)) << x[offset + i];
        }
        EXPECT_EQ(u[n], 0xEEEE);
        EXPECT_EQ(s[n], 0x5A5A);
      }
    }
  }
}

TEST_P(QuantSimd, Dequantize16MatchesScalar) {
  std::vector<uint16_t> u(1100);
  std::vector<int16_t> s(1100);
  for (int i = 0; i < 1100; ++i) {
    u[i] = static_cast<uint16_t>(i * 997);
    s[i] = static_cast<int16_t>(i * 1301);
  }
  for (int64_t offset : {0, 1}) {
    for (int64_t n : {1, 3, 17, 1000}) {
      std::vector<float> yu(n), ys(n);
      DequantizeUint16ToFloat(u.data() + offset, n, 0.001f, 32768.f, yu.data());
      DequantizeInt16ToFloat(s.data() + offset, n, 0.3f, -5.f, ys.data());
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(yu[i], (static_cast<float>(u[offset + i]) - 32768.f) * 0.001f);
        ASSERT_EQ(ys[i], (static_cast<float>(s[offset + i]) + 5.f) * 0.3f);
      }
    }
  }
}

TEST_P(QuantSimd, DequantizeMatchesScalar) {
  std::vector<uint8_t> u(1100);
  std::vector<int8_t> s(1100);
  for (int i = 0; i < 1100; ++i) {
    u[i] = static_cast<uint8_t>(i * 7);
    s[i] = static_cast<int8_t>(i * 13);
  }
  for (int64_t offset : {0, 1}) {
    for (int64_t n : {1, 3, 17, 1000}) {
      std::vector<float> yu(n), ys(n);
      DequantizeUint8ToFloat(u.data() + offset, n, 0.1f, 128.f, yu.data());
      DequantizeInt8ToFloat(s.data() + offset, n, 0.3f, -5.f, ys.data());
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_EQ(yu[i], (static_cast<float>(u[offset + i]) - 128.f) * 0.1f);
        ASSERT_EQ(ys[i], (static_cast<float>(s[offset + i]) + 5.f) * 0.3f);
      }
    }
  }
}

}  // namespace
}  // namespace onnxflow
