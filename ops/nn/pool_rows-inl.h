// Highway bodies of pool_rows.h, compiled once per CPU target by pool_rows.cc. Every tap is an
// unaligned load at a fixed offset, so a window of kh x kw taps costs kh * kw vector loads per
// lanes outputs; the tail goes through a scalar loop (a partial load could cross the row's end).
#if defined(ONNXFLOW_OPS_NN_POOL_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_NN_POOL_ROWS_INL_H_
#undef ONNXFLOW_OPS_NN_POOL_ROWS_INL_H_
#else
#define ONNXFLOW_OPS_NN_POOL_ROWS_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

inline void MaxTapsRowImpl(const float* const* rows, int64_t nrows, int64_t kw, int64_t dw, float* out, int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto m = hn::LoadU(d, rows[0] + i);
    for (int64_t r = 0; r < nrows; ++r) {
      for (int64_t k = 0; k < kw; ++k) m = hn::Max(m, hn::LoadU(d, rows[r] + i + k * dw));
    }
    hn::StoreU(m, d, out + i);
  }
  for (; i < n; ++i) {
    float m = rows[0][i];
    for (int64_t r = 0; r < nrows; ++r) {
      for (int64_t k = 0; k < kw; ++k) m = std::max(m, rows[r][i + k * dw]);
    }
    out[i] = m;
  }
}

inline void SumTapsRowImpl(const float* const* rows, int64_t nrows, int64_t kw, int64_t dw, float scale, float* out,
                           int64_t n) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto vs = hn::Set(d, scale);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    auto s = hn::Zero(d);
    for (int64_t r = 0; r < nrows; ++r) {
      for (int64_t k = 0; k < kw; ++k) s = hn::Add(s, hn::LoadU(d, rows[r] + i + k * dw));
    }
    hn::StoreU(hn::Mul(s, vs), d, out + i);
  }
  for (; i < n; ++i) {
    float s = 0;
    for (int64_t r = 0; r < nrows; ++r) {
      for (int64_t k = 0; k < kw; ++k) s += rows[r][i + k * dw];
    }
    out[i] = s * scale;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
