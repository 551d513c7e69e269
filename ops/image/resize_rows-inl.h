// Highway body of WeightedRowSumF32, compiled once per CPU target through hwy/foreach_target.h
// (see resize_rows.cc).
#if defined(ONNXFLOW_OPS_IMAGE_RESIZE_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_IMAGE_RESIZE_ROWS_INL_H_
#undef ONNXFLOW_OPS_IMAGE_RESIZE_ROWS_INL_H_
#else
#define ONNXFLOW_OPS_IMAGE_RESIZE_ROWS_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace image {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Two taps (bilinear) is the common case: one pass, no read-modify-write of `out`. Wider filters
// (cubic, antialiased) accumulate in registers a vector at a time, so `out` is written once and
// each input row is read once per vector.
inline void WeightedRowSumImpl(const float* const* rows, const float* w, int64_t taps, int64_t n, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if (taps == 2) {
    const float* r0 = rows[0];
    const float* r1 = rows[1];
    const auto w0 = hn::Set(d, w[0]);
    const auto w1 = hn::Set(d, w[1]);
    for (; i + lanes <= n; i += lanes) {
      hn::StoreU(hn::MulAdd(w1, hn::LoadU(d, r1 + i), hn::Mul(w0, hn::LoadU(d, r0 + i))), d, out + i);
    }
    for (; i < n; ++i) out[i] = w[1] * r1[i] + w[0] * r0[i];
    return;
  }
  for (; i + lanes <= n; i += lanes) {
    auto acc = hn::Zero(d);
    for (int64_t k = 0; k < taps; ++k) acc = hn::MulAdd(hn::Set(d, w[k]), hn::LoadU(d, rows[k] + i), acc);
    hn::StoreU(acc, d, out + i);
  }
  for (; i < n; ++i) {
    float acc = 0;
    for (int64_t k = 0; k < taps; ++k) acc += w[k] * rows[k][i];
    out[i] = acc;
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace image
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
