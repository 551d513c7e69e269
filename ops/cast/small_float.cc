#include "ops/cast/small_float.h"

#include <algorithm>
#include <cstring>

#include "ops/framework/numeric.h"

namespace onnxflow {
namespace {

constexpr float kQuietNaN = std::numeric_limits<float>::quiet_NaN();

// Decodes sign|exponent|mantissa with the given field widths and bias; the caller handles the
// patterns the format reserves for Inf/NaN. Exponent 0 is subnormal: mant * 2^(1-bias-mant_bits).
float DecodeFinite(uint32_t bits, int exp_bits, int mant_bits, int bias) {
  const uint32_t sign = bits >> (exp_bits + mant_bits) & 1;
  const int exp = static_cast<int>((bits >> mant_bits) & ((1u << exp_bits) - 1));
  const int mant = static_cast<int>(bits & ((1u << mant_bits) - 1));
  float value;
  if (exp == 0) {
    value = std::ldexp(static_cast<float>(mant), 1 - bias - mant_bits);
  } else {
    value = std::ldexp(static_cast<float>(mant + (1 << mant_bits)), exp - bias - mant_bits);
  }
  return sign ? -value : value;
}

// The magnitude code (exponent|mantissa bits, no sign) of finite a > 0 rounded to nearest even
// in a format with `mant_bits` mantissa bits and exponent `bias`. The result may lie past the
// format's largest code (the caller decides about overflow); exponents are not capped.
uint64_t RoundMagnitude(double a, int mant_bits, int bias) {
  int e2 = 0;
  std::frexp(a, &e2);  // a = f * 2^e2, f in [0.5, 1)
  const int emin = 1 - bias;
  const int exponent = std::max(e2 - 1, emin);
  // Scaling by a power of two is exact; nearbyint rounds half to even in the default mode.
  const double scaled = std::ldexp(a, mant_bits - exponent);
  uint64_t r = static_cast<uint64_t>(std::nearbyint(scaled));
  const uint64_t implicit = uint64_t{1} << mant_bits;
  if (r < implicit) return r;  // subnormal (exponent == emin) or zero
  int64_t biased = exponent + bias;
  if (r == 2 * implicit) {  // rounded up into the next binade
    ++biased;
    r = implicit;
  }
  return (static_cast<uint64_t>(biased) << mant_bits) | (r - implicit);
}

// How a float8 format treats out-of-range values and NaN.
struct Float8Format {
  int mant_bits;
  int bias;
  uint8_t max_code;      // largest finite magnitude code
  bool unsigned_zero;    // FNUZ: no -0, a single NaN 0x80
  uint8_t inf_code;      // 0 when the format has no Inf
  uint8_t nan_code;      // magnitude NaN code (signed formats); FNUZ uses 0x80
};

constexpr Float8Format kE4M3FN{3, 7, 0x7E, false, 0, 0x7F};
constexpr Float8Format kE4M3FNUZ{3, 8, 0x7F, true, 0, 0};
constexpr Float8Format kE5M2{2, 15, 0x7B, false, 0x7C, 0x7E};
constexpr Float8Format kE5M2FNUZ{2, 16, 0x7F, true, 0, 0};

uint8_t EncodeFloat8(double v, bool saturate, const Float8Format& f) {
  const uint8_t sign = std::signbit(v) ? 0x80 : 0x00;
  const uint8_t nan = f.unsigned_zero ? 0x80 : static_cast<uint8_t>(sign | f.nan_code);
  if (std::isnan(v)) return nan;
  // What an out-of-range value becomes.
  const uint8_t overflow = saturate ? static_cast<uint8_t>(sign | f.max_code)
                                    : (f.inf_code != 0 ? static_cast<uint8_t>(sign | f.inf_code) : nan);
  if (std::isinf(v)) return overflow;
  const double a = std::fabs(v);
  if (a == 0) return f.unsigned_zero ? 0 : sign;
  const uint64_t code = RoundMagnitude(a, f.mant_bits, f.bias);
  if (code > f.max_code) return overflow;
  if (code == 0) return f.unsigned_zero ? 0 : sign;
  return static_cast<uint8_t>(sign | code);
}

}  // namespace

float Float8E4M3FNToFloat(uint8_t bits) {
  if ((bits & 0x7F) == 0x7F) return (bits & 0x80) ? -kQuietNaN : kQuietNaN;
  return DecodeFinite(bits, 4, 3, 7);
}

float Float8E4M3FNUZToFloat(uint8_t bits) {
  if (bits == 0x80) return kQuietNaN;
  return DecodeFinite(bits, 4, 3, 8);
}

float Float8E5M2ToFloat(uint8_t bits) {
  if ((bits & 0x7C) == 0x7C) {
    const bool negative = (bits & 0x80) != 0;
    if ((bits & 0x03) == 0) return negative ? -std::numeric_limits<float>::infinity()
                                            : std::numeric_limits<float>::infinity();
    return negative ? -kQuietNaN : kQuietNaN;
  }
  return DecodeFinite(bits, 5, 2, 15);
}

float Float8E5M2FNUZToFloat(uint8_t bits) {
  if (bits == 0x80) return kQuietNaN;
  return DecodeFinite(bits, 5, 2, 16);
}

float Float8E8M0ToFloat(uint8_t bits) {
  if (bits == 0xFF) return kQuietNaN;
  return std::ldexp(1.0f, static_cast<int>(bits) - 127);
}

float Float4E2M1ToFloat(uint8_t bits) { return DecodeFinite(bits & 0x0F, 2, 1, 1); }

uint8_t DoubleToFloat8E4M3FN(double v, bool saturate) { return EncodeFloat8(v, saturate, kE4M3FN); }
uint8_t DoubleToFloat8E4M3FNUZ(double v, bool saturate) { return EncodeFloat8(v, saturate, kE4M3FNUZ); }
uint8_t DoubleToFloat8E5M2(double v, bool saturate) { return EncodeFloat8(v, saturate, kE5M2); }
uint8_t DoubleToFloat8E5M2FNUZ(double v, bool saturate) { return EncodeFloat8(v, saturate, kE5M2FNUZ); }

uint8_t DoubleToFloat4E2M1(double v) {
  if (std::isnan(v)) return 0x08;
  const uint8_t sign = std::signbit(v) ? 0x08 : 0x00;
  const double a = std::fabs(v);
  if (a == 0) return sign;
  if (std::isinf(a)) return sign | 0x07;
  const uint64_t code = RoundMagnitude(a, 1, 1);
  return static_cast<uint8_t>(sign | (code > 0x07 ? 0x07 : code));
}

uint8_t FloatToFloat8E8M0(float v, bool saturate, E8M0Rounding mode) {
  const uint32_t bits = FloatBits(v);
  uint32_t exponent = (bits >> 23) & 0xFF;
  if (exponent == 0xFF) return 0xFF;  // Inf and NaN
  bool round_up = false;
  switch (mode) {
    case E8M0Rounding::kUp:
      round_up = (bits & 0x7FFFFF) != 0;
      break;
    case E8M0Rounding::kNearest: {
      // Guard bit set and anything else below it (or a non-zero exponent): ties go up.
      const bool guard = (bits & 0x400000) != 0;
      const bool round = (bits & 0x200000) != 0;
      const bool sticky = (bits & 0x1FFFFF) != 0;
      round_up = guard && (round || sticky || exponent > 0);
      break;
    }
    case E8M0Rounding::kDown:
      break;
  }
  if (round_up && saturate && exponent == 0xFE) round_up = false;
  if (round_up) ++exponent;  // 0xFE + 1 = 0xFF: NaN when not saturating
  return static_cast<uint8_t>(exponent);
}

uint16_t DoubleToHalf(double v) {
  const uint16_t sign = std::signbit(v) ? 0x8000 : 0;
  if (std::isnan(v)) return sign | 0x7E00;
  const double a = std::fabs(v);
  if (std::isinf(a)) return sign | 0x7C00;
  if (a == 0) return sign;
  const uint64_t code = RoundMagnitude(a, 10, 15);
  if (code > 0x7BFF) return sign | 0x7C00;
  return static_cast<uint16_t>(sign | code);
}

}  // namespace onnxflow
