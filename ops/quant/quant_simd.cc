#include "ops/quant/quant_simd.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/quant/quant_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename Q>
inline Q QuantizeOne(float x, float scale, float zero_point, float lo, float hi) {
  float r = std::nearbyint(x / scale) + zero_point;
  if (std::isnan(r) || r < lo) r = lo;
  if (r > hi) r = hi;
  return static_cast<Q>(static_cast<int32_t>(r));
}

template <typename Q>
void QuantizeImpl(const float* x, int64_t n, float scale, float zero_point, Q* y) {
  const float lo = static_cast<float>(std::numeric_limits<Q>::min());
  const float hi = static_cast<float>(std::numeric_limits<Q>::max());
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<Q, decltype(df)> dq;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto vs = hn::Set(df, scale), vz = hn::Set(df, zero_point);
  const auto vlo = hn::Set(df, lo), vhi = hn::Set(df, hi);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto r = hn::Add(hn::Round(hn::Div(hn::LoadU(df, x + i), vs)), vz);  // Round: half to even
    r = hn::IfThenElse(hn::IsNaN(r), vlo, hn::Min(hn::Max(r, vlo), vhi));
    hn::StoreU(hn::DemoteTo(dq, hn::ConvertTo(di, r)), dq, y + i);
  }
  for (; i < n; ++i) y[i] = QuantizeOne<Q>(x[i], scale, zero_point, lo, hi);
}

template <typename Q>
void DequantizeImpl(const Q* x, int64_t n, float scale, float zero_point, float* y) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<Q, decltype(df)> dq;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto vs = hn::Set(df, scale), vz = hn::Set(df, zero_point);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(dq, x + i)));
    hn::StoreU(hn::Mul(hn::Sub(v, vz), vs), df, y + i);
  }
  for (; i < n; ++i) y[i] = (static_cast<float>(x[i]) - zero_point) * scale;
}

// min(0, min x) and max(0, max x), NaN skipped (DynamicQuantizeLinear's range).
void MinMaxWithZero(const float* x, int64_t n, float* lo_out, float* hi_out) {
  const hn::ScalableTag<float> df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto zero = hn::Zero(df);
  auto lo = zero, hi = zero;
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto v = hn::LoadU(df, x + i);
    v = hn::IfThenElse(hn::IsNaN(v), zero, v);
    lo = hn::Min(lo, v);
    hi = hn::Max(hi, v);
  }
  float l = hn::GetLane(hn::MinOfLanes(df, lo)), h = hn::GetLane(hn::MaxOfLanes(df, hi));
  for (; i < n; ++i) {  // NaN compares false and is skipped
    l = std::min(l, x[i]);
    h = std::max(h, x[i]);
  }
  *lo_out = l;
  *hi_out = h;
}

void IntegralToInt32(const float* x, int64_t n, int32_t* y) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::ConvertTo(di, hn::LoadU(df, x + i)), di, y + i);
  for (; i < n; ++i) y[i] = static_cast<int32_t>(x[i]);
}

void QuantizeU8(const float* x, int64_t n, float s, float z, uint8_t* y) { QuantizeImpl(x, n, s, z, y); }
void QuantizeI8(const float* x, int64_t n, float s, float z, int8_t* y) { QuantizeImpl(x, n, s, z, y); }
void DequantizeU8(const uint8_t* x, int64_t n, float s, float z, float* y) { DequantizeImpl(x, n, s, z, y); }
void DequantizeI8(const int8_t* x, int64_t n, float s, float z, float* y) { DequantizeImpl(x, n, s, z, y); }
void QuantizeU16(const float* x, int64_t n, float s, float z, uint16_t* y) { QuantizeImpl(x, n, s, z, y); }
void QuantizeI16(const float* x, int64_t n, float s, float z, int16_t* y) { QuantizeImpl(x, n, s, z, y); }
void DequantizeU16(const uint16_t* x, int64_t n, float s, float z, float* y) { DequantizeImpl(x, n, s, z, y); }
void DequantizeI16(const int16_t* x, int64_t n, float s, float z, float* y) { DequantizeImpl(x, n, s, z, y); }

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(QuantizeU8);
HWY_EXPORT(QuantizeI8);
HWY_EXPORT(DequantizeU8);
HWY_EXPORT(DequantizeI8);
HWY_EXPORT(QuantizeU16);
HWY_EXPORT(QuantizeI16);
HWY_EXPORT(DequantizeU16);
HWY_EXPORT(DequantizeI16);
HWY_EXPORT(MinMaxWithZero);
HWY_EXPORT(IntegralToInt32);

void FloatRangeWithZero(const float* x, int64_t n, float* lo, float* hi) {
  HWY_DYNAMIC_DISPATCH(MinMaxWithZero)(x, n, lo, hi);
}

void IntegralFloatToInt32(const float* x, int64_t n, int32_t* y) { HWY_DYNAMIC_DISPATCH(IntegralToInt32)(x, n, y); }

void DynamicUint8Params(float lo, float hi, float* scale, float* zero_point) {
  *scale = (hi == lo ? 1.0f : hi - lo) / 255.0f;
  *zero_point = std::nearbyint(std::clamp(0.0f - lo / *scale, 0.0f, 255.0f));
}

void QuantizeFloatToUint8(const float* x, int64_t n, float scale, float zero_point, uint8_t* y) {
  HWY_DYNAMIC_DISPATCH(QuantizeU8)(x, n, scale, zero_point, y);
}
void QuantizeFloatToInt8(const float* x, int64_t n, float scale, float zero_point, int8_t* y) {
  HWY_DYNAMIC_DISPATCH(QuantizeI8)(x, n, scale, zero_point, y);
}
void DequantizeUint8ToFloat(const uint8_t* x, int64_t n, float scale, float zero_point, float* y) {
  HWY_DYNAMIC_DISPATCH(DequantizeU8)(x, n, scale, zero_point, y);
}
void DequantizeInt8ToFloat(const int8_t* x, int64_t n, float scale, float zero_point, float* y) {
  HWY_DYNAMIC_DISPATCH(DequantizeI8)(x, n, scale, zero_point, y);
}
void QuantizeFloatToUint16(const float* x, int64_t n, float scale, float zero_point, uint16_t* y) {
  HWY_DYNAMIC_DISPATCH(QuantizeU16)(x, n, scale, zero_point, y);
}
void QuantizeFloatToInt16(const float* x, int64_t n, float scale, float zero_point, int16_t* y) {
  HWY_DYNAMIC_DISPATCH(QuantizeI16)(x, n, scale, zero_point, y);
}
void DequantizeUint16ToFloat(const uint16_t* x, int64_t n, float scale, float zero_point, float* y) {
  HWY_DYNAMIC_DISPATCH(DequantizeU16)(x, n, scale, zero_point, y);
}
void DequantizeInt16ToFloat(const int16_t* x, int64_t n, float scale, float zero_point, float* y) {
  HWY_DYNAMIC_DISPATCH(DequantizeI16)(x, n, scale, zero_point, y);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
