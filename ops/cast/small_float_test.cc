#include "ops/cast/small_float.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"

namespace onnxflow {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(Float8E4M3FN, KnownPatterns) {
  EXPECT_EQ(DoubleToFloat8E4M3FN(0.0, true), 0x00);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-0.0, true), 0x80);
  EXPECT_EQ(DoubleToFloat8E4M3FN(1.0, true), 0x38);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-1.0, true), 0xB8);
  EXPECT_EQ(DoubleToFloat8E4M3FN(448.0, true), 0x7E);            // max normal
  EXPECT_EQ(DoubleToFloat8E4M3FN(std::ldexp(1.0, -6), true), 0x08);  // min normal
  EXPECT_EQ(DoubleToFloat8E4M3FN(std::ldexp(1.0, -9), true), 0x01);  // min subnormal
  EXPECT_EQ(DoubleToFloat8E4M3FN(std::ldexp(1.0, -10), true), 0x00);  // half of it: tie to even 0
  EXPECT_EQ(DoubleToFloat8E4M3FN(std::ldexp(1.5, -10), true), 0x01);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-std::ldexp(1.0, -11), true), 0x80);  // rounds to -0
  // Ties to even: 1 + 1/16 lies between 0x38 and 0x39, 1 + 3/16 between 0x39 and 0x3A.
  EXPECT_EQ(DoubleToFloat8E4M3FN(1.0625, true), 0x38);
  EXPECT_EQ(DoubleToFloat8E4M3FN(1.1875, true), 0x3A);
  // 464 is the tie between 448 and the (NaN) pattern above it: stays 448 either way.
  EXPECT_EQ(DoubleToFloat8E4M3FN(464.0, false), 0x7E);
  EXPECT_EQ(DoubleToFloat8E4M3FN(465.0, true), 0x7E);
  EXPECT_EQ(DoubleToFloat8E4M3FN(465.0, false), 0x7F);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-1e6, true), 0xFE);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-1e6, false), 0xFF);
  EXPECT_EQ(DoubleToFloat8E4M3FN(kInf, true), 0x7E);
  EXPECT_EQ(DoubleToFloat8E4M3FN(kInf, false), 0x7F);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-kInf, false), 0xFF);
  EXPECT_EQ(DoubleToFloat8E4M3FN(kNaN, true), 0x7F);
  EXPECT_EQ(DoubleToFloat8E4M3FN(-kNaN, false), 0xFF);

  EXPECT_EQ(Float8E4M3FNToFloat(0x7E), 448.0f);
  EXPECT_EQ(Float8E4M3FNToFloat(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(Float8E4M3FNToFloat(0x2F), 0.46875f);
  EXPECT_TRUE(std::signbit(Float8E4M3FNToFloat(0x80)));
  EXPECT_TRUE(std::isnan(Float8E4M3FNToFloat(0x7F)));
  EXPECT_TRUE(std::isnan(Float8E4M3FNToFloat(0xFF)));
  EXPECT_FALSE(std::isinf(Float8E4M3FNToFloat(0x78)));  // 256, no Inf in this format
}

TEST(Float8E4M3FNUZ, KnownPatterns) {
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(1.0, true), 0x40);
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(240.0, true), 0x7F);
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(-0.0, true), 0x00);  // no negative zero
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(-1e-7, true), 0x00);
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(std::ldexp(1.0, -10), true), 0x01);
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(kNaN, true), 0x80);
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(kInf, true), 0x7F);
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(-kInf, true), 0xFF);
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(-kInf, false), 0x80);
  EXPECT_EQ(DoubleToFloat8E4M3FNUZ(1e6, false), 0x80);
  EXPECT_EQ(Float8E4M3FNUZToFloat(0x7F), 240.0f);
  EXPECT_EQ(Float8E4M3FNUZToFloat(0xFF), -240.0f);
  EXPECT_TRUE(std::isnan(Float8E4M3FNUZToFloat(0x80)));
}

TEST(Float8E5M2, KnownPatterns) {
  EXPECT_EQ(DoubleToFloat8E5M2(1.0, true), 0x3C);
  EXPECT_EQ(DoubleToFloat8E5M2(57344.0, true), 0x7B);
  EXPECT_EQ(DoubleToFloat8E5M2(std::ldexp(1.0, -16), true), 0x01);
  // 61440 ties 57344 (odd mantissa) and 65536 (overflow): rounds up, so out of range.
  EXPECT_EQ(DoubleToFloat8E5M2(61440.0, true), 0x7B);
  EXPECT_EQ(DoubleToFloat8E5M2(61440.0, false), 0x7C);
  EXPECT_EQ(DoubleToFloat8E5M2(kInf, false), 0x7C);
  EXPECT_EQ(DoubleToFloat8E5M2(-kInf, false), 0xFC);
  EXPECT_EQ(DoubleToFloat8E5M2(-kInf, true), 0xFB);
  EXPECT_EQ(DoubleToFloat8E5M2(kNaN, true), 0x7E);
  EXPECT_EQ(DoubleToFloat8E5M2(-1e-7, true), 0x80);
  EXPECT_EQ(Float8E5M2ToFloat(0x7C), std::numeric_limits<float>::infinity());
  EXPECT_EQ(Float8E5M2ToFloat(0xFC), -std::numeric_limits<float>::infinity());
  EXPECT_TRUE(std::isnan(Float8E5M2ToFloat(0x7E)));
  EXPECT_EQ(Float8E5M2ToFloat(0x7B), 57344.0f);
}

TEST(Float8E5M2FNUZ, KnownPatterns) {
  EXPECT_EQ(DoubleToFloat8E5M2FNUZ(1.0, true), 0x40);
  EXPECT_EQ(DoubleToFloat8E5M2FNUZ(57344.0, true), 0x7F);
  EXPECT_EQ(DoubleToFloat8E5M2FNUZ(std::ldexp(1.0, -17), true), 0x01);
  EXPECT_EQ(DoubleToFloat8E5M2FNUZ(kInf, false), 0x80);
  EXPECT_EQ(DoubleToFloat8E5M2FNUZ(-0.0, false), 0x00);
  EXPECT_EQ(Float8E5M2FNUZToFloat(0x7F), 57344.0f);
  EXPECT_TRUE(std::isnan(Float8E5M2FNUZToFloat(0x80)));
}

TEST(Float8, DecodeEncodeRoundTripsEveryPattern) {
  for (int b = 0; b < 256; ++b) {
    const uint8_t bits = static_cast<uint8_t>(b);
    const float a = Float8E4M3FNToFloat(bits);
    if (!std::isnan(a)) {
      EXPECT_EQ(DoubleToFloat8E4M3FN(a, false), bits) << b;
    }
    const float c = Float8E5M2ToFloat(bits);
    if (!std::isnan(c)) {
      EXPECT_EQ(DoubleToFloat8E5M2(c, false), bits) << b;
    }
    if (bits != 0x80) {
      EXPECT_EQ(DoubleToFloat8E4M3FNUZ(Float8E4M3FNUZToFloat(bits), false), bits) << b;
      EXPECT_EQ(DoubleToFloat8E5M2FNUZ(Float8E5M2FNUZToFloat(bits), false), bits) << b;
    }
  }
}

TEST(Float8E8M0, RoundingModes) {
  EXPECT_EQ(FloatToFloat8E8M0(1.0f, true, E8M0Rounding::kUp), 0x7F);
  EXPECT_EQ(FloatToFloat8E8M0(1.5f, true, E8M0Rounding::kUp), 0x80);
  EXPECT_EQ(FloatToFloat8E8M0(1.5f, true, E8M0Rounding::kDown), 0x7F);
  EXPECT_EQ(FloatToFloat8E8M0(1.5f, true, E8M0Rounding::kNearest), 0x80);  // tie goes up
  EXPECT_EQ(FloatToFloat8E8M0(1.25f, true, E8M0Rounding::kNearest), 0x7F);
  EXPECT_EQ(FloatToFloat8E8M0(1.75f, true, E8M0Rounding::kNearest), 0x80);
  EXPECT_EQ(FloatToFloat8E8M0(0.124f, true, E8M0Rounding::kUp), 0x7C);
  EXPECT_EQ(FloatToFloat8E8M0(0.0f, true, E8M0Rounding::kUp), 0x00);
  EXPECT_EQ(FloatToFloat8E8M0(std::numeric_limits<float>::infinity(), true, E8M0Rounding::kUp), 0xFF);
  const float big = std::numeric_limits<float>::max();
  EXPECT_EQ(FloatToFloat8E8M0(big, true, E8M0Rounding::kUp), 0xFE);
  EXPECT_EQ(FloatToFloat8E8M0(big, false, E8M0Rounding::kUp), 0xFF);
  EXPECT_EQ(Float8E8M0ToFloat(0x7F), 1.0f);
  EXPECT_EQ(Float8E8M0ToFloat(0x82), 8.0f);
  EXPECT_EQ(Float8E8M0ToFloat(0x00), std::ldexp(1.0f, -127));
  EXPECT_TRUE(std::isnan(Float8E8M0ToFloat(0xFF)));
}

TEST(Float4E2M1, KnownPatterns) {
  EXPECT_EQ(DoubleToFloat4E2M1(0.5), 0x1);
  EXPECT_EQ(DoubleToFloat4E2M1(0.25), 0x0);   // tie to even
  EXPECT_EQ(DoubleToFloat4E2M1(0.75), 0x2);   // tie to even (1.0)
  EXPECT_EQ(DoubleToFloat4E2M1(5.0), 0x6);    // tie between 4 and 6 -> 4
  EXPECT_EQ(DoubleToFloat4E2M1(-3.5), 0xE);   // tie between 3 and 4 -> 4
  EXPECT_EQ(DoubleToFloat4E2M1(6.0), 0x7);
  EXPECT_EQ(DoubleToFloat4E2M1(1e6), 0x7);    // always saturates
  EXPECT_EQ(DoubleToFloat4E2M1(-kInf), 0xF);
  EXPECT_EQ(DoubleToFloat4E2M1(kNaN), 0x8);
  EXPECT_EQ(DoubleToFloat4E2M1(-0.0), 0x8);
  const float expected[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
  for (int b = 0; b < 8; ++b) {
    EXPECT_EQ(Float4E2M1ToFloat(static_cast<uint8_t>(b)), expected[b]);
    EXPECT_EQ(Float4E2M1ToFloat(static_cast<uint8_t>(b | 8)), -expected[b]);
  }
}

TEST(DoubleToHalf, RoundsOnce) {
  EXPECT_EQ(DoubleToHalf(1.0), 0x3C00);
  EXPECT_EQ(DoubleToHalf(65504.0), 0x7BFF);
  EXPECT_EQ(DoubleToHalf(65520.0), 0x7C00);  // tie rounds to even = overflow
  EXPECT_EQ(DoubleToHalf(std::ldexp(1.0, -24)), 0x0001);
  EXPECT_EQ(DoubleToHalf(1.0 + std::ldexp(1.0, -11)), 0x3C00);  // exact tie -> even
  // Just above the tie: through float this would round twice and land on 0x3C00.
  EXPECT_EQ(DoubleToHalf(1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -40)), 0x3C01);
  EXPECT_EQ(DoubleToHalf(-kInf), 0xFC00);
  for (uint32_t h = 0; h < 0x7C00; h += 7) EXPECT_EQ(DoubleToHalf(HalfToFloat(static_cast<uint16_t>(h))), h);
}

TEST(SubByteInts, Wrap) {
  EXPECT_EQ(WrapToInt4(-9).value, 7);
  EXPECT_EQ(WrapToInt4(8).value, -8);
  EXPECT_EQ(WrapToUInt4(-1).value, 15);
  EXPECT_EQ(WrapToUInt4(16).value, 0);
  EXPECT_EQ(WrapToInt2(2).value, -2);
  EXPECT_EQ(WrapToInt2(-3).value, 1);
  EXPECT_EQ(WrapToUInt2(-1).value, 3);
}

}  // namespace
}  // namespace onnxflow
