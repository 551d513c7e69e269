// Highway bodies of float_rows.h, compiled once per CPU target through hwy/foreach_target.h
// (see float_rows.cc).
#if defined(ONNXFLOW_OPS_ML_FLOAT_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_ML_FLOAT_ROWS_INL_H_
#undef ONNXFLOW_OPS_ML_FLOAT_ROWS_INL_H_
#else
#define ONNXFLOW_OPS_ML_FLOAT_ROWS_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace ml {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A compare and a select per vector: memory-bound, so one vector per iteration is enough.
inline void BinarizeImpl(const float* x, int64_t n, float threshold, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto t = hn::Set(d, threshold);
  const auto one = hn::Set(d, 1.0f);
  const auto zero = hn::Zero(d);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::IfThenElse(hn::Gt(hn::LoadU(d, x + i), t), one, zero), d, out + i);
  }
  for (; i < n; ++i) out[i] = x[i] > threshold ? 1.0f : 0.0f;
}

// Subtract then multiply (not a fused multiply-add), so results match the scalar loop bit for bit.
inline void ScaleRowImpl(const float* x, int64_t n, const float* offset, const float* scale, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto v = hn::Sub(hn::LoadU(d, x + i), hn::LoadU(d, offset + i));
    hn::StoreU(hn::Mul(v, hn::LoadU(d, scale + i)), d, out + i);
  }
  for (; i < n; ++i) out[i] = (x[i] - offset[i]) * scale[i];
}

inline void ScaleAllImpl(const float* x, int64_t n, float offset, float scale, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto o = hn::Set(d, offset);
  const auto s = hn::Set(d, scale);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::Mul(hn::Sub(hn::LoadU(d, x + i), o), s), d, out + i);
  for (; i < n; ++i) out[i] = (x[i] - offset) * scale;
}

}  // namespace HWY_NAMESPACE
}  // namespace ml
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
