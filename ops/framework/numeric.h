// Conversions between float and the storage types C++ lacks (float16, bfloat16), and the
// `ComputeType` that kernels do arithmetic in: float for the 16-bit floats, the type itself
// otherwise. The float8/float4 formats are converted by ops/cast (only Cast and the quantization
// ops compute with them).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "include/onnxflow/tensor.h"

namespace onnxflow {

inline uint32_t FloatBits(float f) { uint32_t u; std::memcpy(&u, &f, 4); return u; }
inline float BitsToFloat(uint32_t u) { float f; std::memcpy(&f, &u, 4); return f; }

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t mant = h & 0x3ff;
  if (exp == 0) {  // zero or subnormal: mant * 2^-24
    const float f = static_cast<float>(mant) * 5.9604644775390625e-08f;
    return sign ? -f : f;
  }
  if (exp == 31) return BitsToFloat(sign | 0x7f800000u | (mant << 13));  // inf / nan
  return BitsToFloat(sign | ((exp + 112) << 23) | (mant << 13));
}

// Round to nearest even, overflow to inf, NaN kept quiet.
inline uint16_t FloatToHalf(float f) {
  const uint32_t u = FloatBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000);
  const uint32_t abs = u & 0x7fffffffu;
  if (abs >= 0x7f800000u) return sign | (abs > 0x7f800000u ? 0x7e00 : 0x7c00);
  if (abs >= 0x477ff000u) return sign | 0x7c00;  // rounds past 65504
  if (abs < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    const float scaled = BitsToFloat(abs) * 16777216.0f;  // * 2^24, exact
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  const uint32_t rounded = abs + 0xfff + ((abs >> 13) & 1);
  return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
}

inline float BFloat16ToFloat(uint16_t b) { return BitsToFloat(static_cast<uint32_t>(b) << 16); }

inline uint16_t FloatToBFloat16(float f) {
  const uint32_t u = FloatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40);  // quiet NaN
  return static_cast<uint16_t>((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

// The type kernels compute in for element type T.
template <typename T> struct ComputeTypeOf { using type = T; };
template <> struct ComputeTypeOf<Float16> { using type = float; };
template <> struct ComputeTypeOf<BFloat16> { using type = float; };
template <typename T> using ComputeType = typename ComputeTypeOf<T>::type;

template <typename T> inline ComputeType<T> ToCompute(T v) { return v; }
template <> inline float ToCompute<Float16>(Float16 v) { return HalfToFloat(v.bits); }
template <> inline float ToCompute<BFloat16>(BFloat16 v) { return BFloat16ToFloat(v.bits); }

template <typename T> inline T FromCompute(ComputeType<T> v) { return static_cast<T>(v); }
template <> inline Float16 FromCompute<Float16>(float v) { return Float16{FloatToHalf(v)}; }
template <> inline BFloat16 FromCompute<BFloat16>(float v) { return BFloat16{FloatToBFloat16(v)}; }

}  // namespace onnxflow
