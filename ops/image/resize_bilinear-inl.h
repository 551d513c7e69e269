// Highway body of BilinearRowF32, compiled once per CPU target through hwy/foreach_target.h (see
// resize_bilinear.cc). Mul and Add stay separate: a fused multiply-add would round once where
// ONNX Runtime rounds twice, and the point of this kernel is its bits (resize_bilinear.h).
#if defined(ONNXFLOW_OPS_IMAGE_RESIZE_BILINEAR_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_IMAGE_RESIZE_BILINEAR_INL_H_
#undef ONNXFLOW_OPS_IMAGE_RESIZE_BILINEAR_INL_H_
#else
#define ONNXFLOW_OPS_IMAGE_RESIZE_BILINEAR_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "ops/image/resize_bilinear.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace image {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

inline void BilinearRowImpl(const float* lo_row, const float* hi_row, float wy_lo, float wy_hi,
                            const BilinearAxis& x, float* out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  const int64_t n = static_cast<int64_t>(x.lo.size());
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto ylo = hn::Set(d, wy_lo), yhi = hn::Set(d, wy_hi);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto ilo = hn::LoadU(di, x.lo.data() + i), ihi = hn::LoadU(di, x.hi.data() + i);
    const auto xlo = hn::LoadU(d, x.w_lo.data() + i), xhi = hn::LoadU(d, x.w_hi.data() + i);
    auto sum = hn::Add(hn::Mul(hn::Mul(xlo, ylo), hn::GatherIndex(d, lo_row, ilo)),
                       hn::Mul(hn::Mul(xhi, ylo), hn::GatherIndex(d, lo_row, ihi)));
    sum = hn::Add(sum, hn::Mul(hn::Mul(xlo, yhi), hn::GatherIndex(d, hi_row, ilo)));
    sum = hn::Add(sum, hn::Mul(hn::Mul(xhi, yhi), hn::GatherIndex(d, hi_row, ihi)));
    hn::StoreU(sum, d, out + i);
  }
  for (; i < n; ++i) {
    const int32_t a = x.lo[i], b = x.hi[i];
    out[i] = x.w_lo[i] * wy_lo * lo_row[a] + x.w_hi[i] * wy_lo * lo_row[b] + x.w_lo[i] * wy_hi * hi_row[a] +
             x.w_hi[i] * wy_hi * hi_row[b];
  }
}

// The same on channel-blocked rows: pixel i of a row is `block` floats (its channels), every one
// sampled with the pixel's weights, in the same arithmetic.
inline void BilinearBlockedRowImpl(const float* lo_row, const float* hi_row, float wy_lo, float wy_hi,
                                   const BilinearAxis& x, int64_t block, float* out) {
  const hn::ScalableTag<float> d;
  const int64_t n = static_cast<int64_t>(x.lo.size());
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto ylo = hn::Set(d, wy_lo), yhi = hn::Set(d, wy_hi);
  for (int64_t i = 0; i < n; ++i) {
    const float *a = lo_row + x.lo[i] * block, *b = lo_row + x.hi[i] * block;
    const float *c = hi_row + x.lo[i] * block, *e = hi_row + x.hi[i] * block;
    const auto xlo = hn::Set(d, x.w_lo[i]), xhi = hn::Set(d, x.w_hi[i]);
    const auto w00 = hn::Mul(xlo, ylo), w01 = hn::Mul(xhi, ylo), w10 = hn::Mul(xlo, yhi), w11 = hn::Mul(xhi, yhi);
    float* o = out + i * block;
    int64_t l = 0;
    for (; l + lanes <= block; l += lanes) {
      auto sum = hn::Add(hn::Mul(w00, hn::LoadU(d, a + l)), hn::Mul(w01, hn::LoadU(d, b + l)));
      sum = hn::Add(sum, hn::Mul(w10, hn::LoadU(d, c + l)));
      sum = hn::Add(sum, hn::Mul(w11, hn::LoadU(d, e + l)));
      hn::StoreU(sum, d, o + l);
    }
    for (; l < block; ++l) {
      o[l] = x.w_lo[i] * wy_lo * a[l] + x.w_hi[i] * wy_lo * b[l] + x.w_lo[i] * wy_hi * c[l] + x.w_hi[i] * wy_hi * e[l];
    }
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace image
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
