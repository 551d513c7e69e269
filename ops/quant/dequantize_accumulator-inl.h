// Highway body of DequantizeAccumulatorRow (dequantize_accumulator_simd.cc), compiled once per
// target; Mul then Add, never MulAdd (and the file built with -ffp-contract=off).
#if defined(ONNXFLOW_OPS_QUANT_DEQUANTIZE_ACCUMULATOR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_QUANT_DEQUANTIZE_ACCUMULATOR_INL_H_
#undef ONNXFLOW_OPS_QUANT_DEQUANTIZE_ACCUMULATOR_INL_H_
#else
#define ONNXFLOW_OPS_QUANT_DEQUANTIZE_ACCUMULATOR_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One channel's run: a single bias value (bias_c points at it) or none.
inline void DequantizeAccumulatorImpl(const int32_t* acc, int64_t n, float scale, const float* bias_c,
                                      const float* clamp, float* y) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const float lo = clamp != nullptr ? clamp[0] : 0.0f, hi = clamp != nullptr ? clamp[1] : 0.0f;
  const auto s = hn::Set(df, scale), b = hn::Set(df, bias_c != nullptr ? *bias_c : 0.0f);
  const auto vlo = hn::Set(df, lo), vhi = hn::Set(df, hi);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto v = hn::Mul(hn::ConvertTo(df, hn::LoadU(di, acc + i)), s);
    if (bias_c != nullptr) v = hn::Add(v, b);
    if (clamp != nullptr) v = hn::Min(hn::Max(v, vlo), vhi);
    hn::StoreU(v, df, y + i);
  }
  for (; i < n; ++i) {
    float v = static_cast<float>(acc[i]) * scale;
    if (bias_c != nullptr) v = v + *bias_c;
    y[i] = clamp != nullptr ? std::min(std::max(v, lo), hi) : v;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
