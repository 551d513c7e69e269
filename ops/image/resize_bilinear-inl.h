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

// The four samples of `lanes` outputs come from gathers only where they must: when the outputs'
// columns all lie in one vector's reach of the row (any upscale), from one load per row and lane
// permutes; when they are consecutive pairs two apart (a 2x downscale), from interleaved loads.
// A gather of 16 spread lanes costs this CPU (Zen 4) tens of cycles: 64 x 256 x 256 downscaled by
// 2 took 4.5 ms on one core, 3 x 512 x 512 upscaled by 2 4.4 ms. The arithmetic is the same in
// every case, so are the bits.
inline void BilinearRowImpl(const float* lo_row, const float* hi_row, float wy_lo, float wy_hi,
                            const BilinearAxis& x, float* out) {
  const hn::ScalableTag<float> d;
  const hn::RebindToSigned<decltype(d)> di;
  using VF = hn::Vec<decltype(d)>;
  const int64_t n = static_cast<int64_t>(x.lo.size());
  const int32_t lanes = static_cast<int32_t>(hn::Lanes(d));
  const auto ylo = hn::Set(d, wy_lo), yhi = hn::Set(d, wy_hi);
  const int32_t last = n > 0 ? x.hi[n - 1] : 0;  // the last column read: loads stay within the row
  const auto pair_step = hn::Add(hn::Iota(di, 0), hn::Iota(di, 0)), one = hn::Set(di, 1);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto ilo = hn::LoadU(di, x.lo.data() + i), ihi = hn::LoadU(di, x.hi.data() + i);
    const auto xlo = hn::LoadU(d, x.w_lo.data() + i), xhi = hn::LoadU(d, x.w_hi.data() + i);
    const int32_t base = x.lo[i];
    const auto vbase = hn::Set(di, base);
    VF a, b, c, e;  // lo_row[lo], lo_row[hi], hi_row[lo], hi_row[hi]
    if (x.hi[i + lanes - 1] - base < lanes && base + lanes - 1 <= last) {
      const auto tlo = hn::IndicesFromVec(d, hn::Sub(ilo, vbase)), thi = hn::IndicesFromVec(d, hn::Sub(ihi, vbase));
      const VF lo = hn::LoadU(d, lo_row + base), hi = hn::LoadU(d, hi_row + base);
      a = hn::TableLookupLanes(lo, tlo);
      b = hn::TableLookupLanes(lo, thi);
      c = hn::TableLookupLanes(hi, tlo);
      e = hn::TableLookupLanes(hi, thi);
    } else if (base + 2 * lanes - 1 <= last && hn::AllTrue(di, hn::Eq(ilo, hn::Add(vbase, pair_step))) &&
               hn::AllTrue(di, hn::Eq(ihi, hn::Add(ilo, one)))) {
      hn::LoadInterleaved2(d, lo_row + base, a, b);
      hn::LoadInterleaved2(d, hi_row + base, c, e);
    } else {
      a = hn::GatherIndex(d, lo_row, ilo);
      b = hn::GatherIndex(d, lo_row, ihi);
      c = hn::GatherIndex(d, hi_row, ilo);
      e = hn::GatherIndex(d, hi_row, ihi);
    }
    auto sum = hn::Add(hn::Mul(hn::Mul(xlo, ylo), a), hn::Mul(hn::Mul(xhi, ylo), b));
    sum = hn::Add(sum, hn::Mul(hn::Mul(xlo, yhi), c));
    sum = hn::Add(sum, hn::Mul(hn::Mul(xhi, yhi), e));
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
