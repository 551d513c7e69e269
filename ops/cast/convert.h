// Element conversion between any two ONNX element types except complex, as Cast defines it.
//
// A value is first widened without loss (floats of every width to float or double, integers to
// int64/uint64, bool to 0/1) and then narrowed to the destination with one rounding:
// - to a float type: round to nearest even (float8/float4/e8m0 per small_float.h and the
//   CastOptions); to float16 from double rounds once (not through float).
// - float to integer: truncation toward zero. Out-of-range and NaN are undefined in the spec; we
//   give what numpy gives on x86 (int8/16/32 and uint8/16 go through int32 with INT32_MIN for
//   out-of-range, the wider ones through int64 with INT64_MIN).
// - integer to integer: keep the low bits (two's complement), sub-byte types included.
// - to bool: non-zero (NaN included) is true.
// Strings are handled by CastElements (cast_elements.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "include/onnxflow/tensor.h"
#include "ops/cast/small_float.h"
#include "ops/framework/numeric.h"

namespace onnxflow {

struct CastOptions {
  bool saturate = true;                          // float8 targets (Cast-19+)
  E8M0Rounding round_mode = E8M0Rounding::kUp;   // float8e8m0 targets (Cast-24+)
};

namespace cast_internal {

template <typename T>
inline constexpr bool kIsNativeFloat = std::is_same_v<T, float> || std::is_same_v<T, double>;
template <typename T>
inline constexpr bool kIsHalf = std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>;
template <typename T>
inline constexpr bool kIsNativeInt = std::is_integral_v<T> && !std::is_same_v<T, bool>;

// Truncates a float toward zero into integer type I (see the header comment for out-of-range).
template <typename I, typename F>
inline I FloatToInt(F v) {
  if constexpr (std::is_same_v<I, uint64_t>) {
    if (v >= F(0) && v < F(18446744073709551616.0)) return static_cast<uint64_t>(v);
    return static_cast<uint64_t>(FloatToInt<int64_t>(v));
  } else if constexpr (sizeof(I) <= 2 || std::is_same_v<I, int32_t>) {
    int32_t t = INT32_MIN;
    if (v > F(-2147483649.0) && v < F(2147483648.0)) t = static_cast<int32_t>(v);
    return static_cast<I>(t);
  } else {  // int64, uint32
    int64_t t = INT64_MIN;
    if (v >= F(-9223372036854775808.0) && v < F(9223372036854775808.0)) t = static_cast<int64_t>(v);
    return static_cast<I>(t);
  }
}

// Lossless widening: float or double for floats, int64/uint64 for integers and bool.
template <typename S>
inline auto Widen(S v) {
  if constexpr (kIsNativeFloat<S>) {
    return v;
  } else if constexpr (kIsHalf<S>) {
    return ToCompute(v);
  } else if constexpr (IsSmallFloat<S>::value) {
    return SmallFloatToFloat(v);
  } else if constexpr (std::is_same_v<S, bool>) {
    return int64_t{v ? 1 : 0};
  } else if constexpr (kIsNativeInt<S>) {
    if constexpr (std::is_unsigned_v<S>) return static_cast<uint64_t>(v);
    else return static_cast<int64_t>(v);
  } else {
    static_assert(IsSubByteInt<S>::value, "unsupported source type");
    return SubByteToInt(v);
  }
}

// One rounding from a widened value W to destination D.
template <typename D, typename W>
inline D Narrow(W w, const CastOptions& options) {
  if constexpr (std::is_floating_point_v<W>) {
    if constexpr (kIsNativeFloat<D>) {
      return static_cast<D>(w);
    } else if constexpr (std::is_same_v<D, Float16>) {
      if constexpr (std::is_same_v<W, float>) return Float16{FloatToHalf(w)};
      else return Float16{DoubleToHalf(w)};
    } else if constexpr (std::is_same_v<D, BFloat16>) {
      return BFloat16{FloatToBFloat16(static_cast<float>(w))};
    } else if constexpr (IsSmallFloat<D>::value) {
      return SmallFloatFromDouble<D>(static_cast<double>(w), options.saturate, options.round_mode);
    } else if constexpr (std::is_same_v<D, bool>) {
      return w != W(0);
    } else if constexpr (kIsNativeInt<D>) {
      return FloatToInt<D>(w);
    } else {
      static_assert(IsSubByteInt<D>::value, "unsupported destination type");
      return SubByteFromInt<D>(FloatToInt<int64_t>(w));
    }
  } else {  // int64_t or uint64_t
    if constexpr (kIsNativeFloat<D>) {
      return static_cast<D>(w);
    } else if constexpr (std::is_same_v<D, Float16>) {
      return Float16{DoubleToHalf(static_cast<double>(w))};
    } else if constexpr (std::is_same_v<D, BFloat16>) {
      return BFloat16{FloatToBFloat16(static_cast<float>(w))};
    } else if constexpr (IsSmallFloat<D>::value) {
      return SmallFloatFromDouble<D>(static_cast<double>(w), options.saturate, options.round_mode);
    } else if constexpr (std::is_same_v<D, bool>) {
      return w != 0;
    } else if constexpr (kIsNativeInt<D>) {
      return static_cast<D>(w);  // modular
    } else {
      static_assert(IsSubByteInt<D>::value, "unsupported destination type");
      return SubByteFromInt<D>(static_cast<int64_t>(w));
    }
  }
}

}  // namespace cast_internal

// Converts one element of type S to type D.
template <typename D, typename S>
inline D ConvertElement(S v, const CastOptions& options = CastOptions()) {
  if constexpr (std::is_same_v<D, S>) {
    return v;
  } else {
    return cast_internal::Narrow<D>(cast_internal::Widen(v), options);
  }
}

}  // namespace onnxflow
