// Conversions between float/double and the small element types C++ lacks: the four float8
// formats (E4M3FN, E4M3FNUZ, E5M2, E5M2FNUZ), the scale format E8M0, the 4-bit float E2M1, double
// to float16, and the sub-byte integers (int4/uint4/int2/uint2, stored one element per byte).
//
// Rules (from the ONNX Cast spec and its reference):
// - Rounding to a float8/float4 value is round-to-nearest-even on the value's exact magnitude.
// - saturate=true: +-Inf and values that round beyond the largest finite value become +-max.
//   saturate=false: they become Inf for E5M2, NaN for the others (E4M3FN keeps the sign bit,
//   the FNUZ formats have one NaN, 0x80). Float4E2M1 has neither Inf nor NaN and always
//   saturates; NaN maps to 0x8 (the pattern the ONNX reference writes).
// - The FNUZ formats have no negative zero: -0 and negative values that round to 0 give 0x00.
// - E8M0 holds only an exponent (2^(bits-127), 0xFF is NaN); its rounding mode is chosen by
//   Cast's round_mode attribute and the sign of the input is ignored.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "include/onnxflow/tensor.h"

namespace onnxflow {

enum class E8M0Rounding { kUp, kDown, kNearest };

// ---- decoding: every pattern maps to exactly one float (no rounding involved) ----
float Float8E4M3FNToFloat(uint8_t bits);
float Float8E4M3FNUZToFloat(uint8_t bits);
float Float8E5M2ToFloat(uint8_t bits);
float Float8E5M2FNUZToFloat(uint8_t bits);
float Float8E8M0ToFloat(uint8_t bits);
float Float4E2M1ToFloat(uint8_t bits);  // low 4 bits

// ---- encoding from double (float inputs convert exactly to double, so one rounding) ----
uint8_t DoubleToFloat8E4M3FN(double v, bool saturate);
uint8_t DoubleToFloat8E4M3FNUZ(double v, bool saturate);
uint8_t DoubleToFloat8E5M2(double v, bool saturate);
uint8_t DoubleToFloat8E5M2FNUZ(double v, bool saturate);
uint8_t DoubleToFloat4E2M1(double v);
// E8M0 works on float32 bits (the reference converts to float32 first).
uint8_t FloatToFloat8E8M0(float v, bool saturate, E8M0Rounding mode);
// float16 with one rounding from double (going through float could round twice).
uint16_t DoubleToHalf(double v);

// ---- sub-byte integers: keep the low bits, sign-extended for the signed types ----
inline Int4 WrapToInt4(int64_t v) { return Int4{static_cast<int8_t>(((v & 0xF) ^ 0x8) - 0x8)}; }
inline UInt4 WrapToUInt4(int64_t v) { return UInt4{static_cast<uint8_t>(v & 0xF)}; }
inline Int2 WrapToInt2(int64_t v) { return Int2{static_cast<int8_t>(((v & 0x3) ^ 0x2) - 0x2)}; }
inline UInt2 WrapToUInt2(int64_t v) { return UInt2{static_cast<uint8_t>(v & 0x3)}; }

// ---- generic helpers over the storage structs ----
template <typename T> struct IsSmallFloat : std::false_type {};
template <> struct IsSmallFloat<Float8E4M3FN> : std::true_type {};
template <> struct IsSmallFloat<Float8E4M3FNUZ> : std::true_type {};
template <> struct IsSmallFloat<Float8E5M2> : std::true_type {};
template <> struct IsSmallFloat<Float8E5M2FNUZ> : std::true_type {};
template <> struct IsSmallFloat<Float8E8M0> : std::true_type {};
template <> struct IsSmallFloat<Float4E2M1> : std::true_type {};

template <typename T> struct IsSubByteInt : std::false_type {};
template <> struct IsSubByteInt<Int4> : std::true_type {};
template <> struct IsSubByteInt<UInt4> : std::true_type {};
template <> struct IsSubByteInt<Int2> : std::true_type {};
template <> struct IsSubByteInt<UInt2> : std::true_type {};

inline float SmallFloatToFloat(Float8E4M3FN v) { return Float8E4M3FNToFloat(v.bits); }
inline float SmallFloatToFloat(Float8E4M3FNUZ v) { return Float8E4M3FNUZToFloat(v.bits); }
inline float SmallFloatToFloat(Float8E5M2 v) { return Float8E5M2ToFloat(v.bits); }
inline float SmallFloatToFloat(Float8E5M2FNUZ v) { return Float8E5M2FNUZToFloat(v.bits); }
inline float SmallFloatToFloat(Float8E8M0 v) { return Float8E8M0ToFloat(v.bits); }
inline float SmallFloatToFloat(Float4E2M1 v) { return Float4E2M1ToFloat(v.bits); }

// Encodes `v` as small float T. `saturate` and `mode` apply where the format uses them.
template <typename T>
T SmallFloatFromDouble(double v, bool saturate = true, E8M0Rounding mode = E8M0Rounding::kUp);
template <> inline Float8E4M3FN SmallFloatFromDouble<Float8E4M3FN>(double v, bool s, E8M0Rounding) {
  return Float8E4M3FN{DoubleToFloat8E4M3FN(v, s)};
}
template <> inline Float8E4M3FNUZ SmallFloatFromDouble<Float8E4M3FNUZ>(double v, bool s, E8M0Rounding) {
  return Float8E4M3FNUZ{DoubleToFloat8E4M3FNUZ(v, s)};
}
template <> inline Float8E5M2 SmallFloatFromDouble<Float8E5M2>(double v, bool s, E8M0Rounding) {
  return Float8E5M2{DoubleToFloat8E5M2(v, s)};
}
template <> inline Float8E5M2FNUZ SmallFloatFromDouble<Float8E5M2FNUZ>(double v, bool s, E8M0Rounding) {
  return Float8E5M2FNUZ{DoubleToFloat8E5M2FNUZ(v, s)};
}
template <> inline Float8E8M0 SmallFloatFromDouble<Float8E8M0>(double v, bool s, E8M0Rounding m) {
  return Float8E8M0{FloatToFloat8E8M0(static_cast<float>(v), s, m)};
}
template <> inline Float4E2M1 SmallFloatFromDouble<Float4E2M1>(double v, bool, E8M0Rounding) {
  return Float4E2M1{DoubleToFloat4E2M1(v)};
}

inline int64_t SubByteToInt(Int4 v) { return v.value; }
inline int64_t SubByteToInt(UInt4 v) { return v.value; }
inline int64_t SubByteToInt(Int2 v) { return v.value; }
inline int64_t SubByteToInt(UInt2 v) { return v.value; }

template <typename T> T SubByteFromInt(int64_t v);
template <> inline Int4 SubByteFromInt<Int4>(int64_t v) { return WrapToInt4(v); }
template <> inline UInt4 SubByteFromInt<UInt4>(int64_t v) { return WrapToUInt4(v); }
template <> inline Int2 SubByteFromInt<Int2>(int64_t v) { return WrapToInt2(v); }
template <> inline UInt2 SubByteFromInt<UInt2>(int64_t v) { return WrapToUInt2(v); }

// Range of a sub-byte integer type (for saturating quantization).
template <typename T> struct SubByteRange;
template <> struct SubByteRange<Int4> { static constexpr int64_t kMin = -8, kMax = 7; };
template <> struct SubByteRange<UInt4> { static constexpr int64_t kMin = 0, kMax = 15; };
template <> struct SubByteRange<Int2> { static constexpr int64_t kMin = -2, kMax = 1; };
template <> struct SubByteRange<UInt2> { static constexpr int64_t kMin = 0, kMax = 3; };

}  // namespace onnxflow
