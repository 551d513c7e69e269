// SIMD row kernel of the depthwise convolution (conv_depthwise.cc): out[q] += w * in[q * stride].
// Compiled per CPU target through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_
#undef ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_
#else
#define ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"
#include "ops/math/column_phases-inl.h"
#include "ops/math/conv_depthwise.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Adds w * in[q * stride] to out[q] for q in [0, count). Stride 1 (the common depthwise case)
// streams full vectors and finishes with one masked vector (rows of 7..56 pixels would otherwise
// spend half their time in a scalar tail); other strides use the scalar loop (a gather would cost
// as much).
HWY_INLINE void DepthwiseRowImpl(const float* HWY_RESTRICT in, float w, float* HWY_RESTRICT out, int64_t count,
                      int64_t stride) {
  int64_t q = 0;
  if (stride == 1) {
    const hn::ScalableTag<float> d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    const auto wv = hn::Set(d, w);
    for (; q + lanes <= count; q += lanes) {
      hn::StoreU(hn::MulAdd(wv, hn::LoadU(d, in + q), hn::LoadU(d, out + q)), d, out + q);
    }
#if HWY_TARGET <= HWY_AVX2  // native masked loads and stores: no lane past `count` is touched
    if (q < count) {
      const auto mask = hn::FirstN(d, static_cast<size_t>(count - q));
      const auto sum = hn::MulAdd(wv, hn::MaskedLoad(mask, d, in + q), hn::MaskedLoad(mask, d, out + q));
      hn::BlendedStore(sum, mask, d, out + q);
      return;
    }
#endif
  }
  for (; q < count; ++q) out[q] += w * in[q * stride];
}

// One output plane: out = bias + the k_h x k_w shifted input rows, each weighted. The whole plane
// runs in one dispatched call so that the row kernel inlines (a call per row and tap cost more
// than the arithmetic on 7..56-pixel rows). The shift loop clips the columns that fall into the
// padding, so the row kernel never reads outside the image.
void DepthwisePlaneImpl(const DepthwisePlane& p, const float* HWY_RESTRICT img, const float* HWY_RESTRICT wm,
                        float bias, float* HWY_RESTRICT out, float* HWY_RESTRICT scratch) {
  if (p.sw <= 2 && p.kw_n <= kDepthwiseMaxFastTaps) {
    // Copy the plane once with its padding (scratch: DepthwiseScratch floats); a row stride of 2
    // keeps its even and odd columns apart, so tap kw of consecutive outputs is again a
    // contiguous run (phase (kw*dw) % 2, offset (kw*dw) / 2). Then every output vector sums all
    // taps in a register: one store per output vector instead of a load and a store of the row
    // per tap (a masked store followed by a load of the same row cannot be forwarded and stalled
    // the old loop).
    const int64_t s = p.sw, hp = p.padded_w, rows = p.ih_n;
    int64_t tap_offset[kDepthwiseMaxFastTaps];  // where tap kw starts in an input row's phases
    for (int64_t kw = 0; kw < p.kw_n; ++kw) tap_offset[kw] = (kw * p.dw % s) * hp + kw * p.dw / s;
    // A row is padded once into `padded_row` (s * hp floats: every column any phase reads), then
    // split into its even and odd halves when the stride is 2.
    float* padded_row = scratch + DepthwisePlaneFloats(p);
    const int64_t right = s * hp - p.pw - p.iw_n;  // >= 0: hp covers the padded row
    for (int64_t r = 0; r < rows; ++r) {
      const float* src = img + r * p.iw_n;
      float* dst = s == 1 ? scratch + r * hp : padded_row;
      std::fill(dst, dst + p.pw, 0.0f);
      std::copy(src, src + p.iw_n, dst + p.pw);
      std::fill(dst + p.pw + p.iw_n, dst + p.pw + p.iw_n + right, 0.0f);
      if (s == 2) SplitEvenOddRow(padded_row, 2 * hp, scratch + 2 * r * hp, scratch + (2 * r + 1) * hp);
    }
    const hn::ScalableTag<float> d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    // Tail vectors of the last row read past it (their extra lanes are dropped).
    std::fill(scratch + rows * s * hp, scratch + DepthwisePlaneFloats(p), 0.0f);
    for (int64_t oh = 0; oh < p.oh_n; ++oh) {
      float* orow = out + oh * p.ow_n;
      for (int64_t q = 0; q < p.ow_n; q += lanes) {
        auto acc = hn::Set(d, bias);
        for (int64_t kh = 0; kh < p.kh_n; ++kh) {
          const int64_t ih = oh * p.sh - p.ph + kh * p.dh;
          if (ih < 0 || ih >= rows) continue;
          const float* prow = scratch + ih * s * hp + q;
          for (int64_t kw = 0; kw < p.kw_n; ++kw) {  // padded column s*q + kw*dw
            acc = hn::MulAdd(hn::Set(d, wm[kh * p.kw_n + kw]), hn::LoadU(d, prow + tap_offset[kw]), acc);
          }
        }
        if (q + lanes <= p.ow_n) {
          hn::StoreU(acc, d, orow + q);
        } else {
          HWY_ALIGN float tail[hn::MaxLanes(d)];
          hn::Store(acc, d, tail);
          std::copy(tail, tail + (p.ow_n - q), orow + q);
        }
      }
    }
    return;
  }
  for (int64_t oh = 0; oh < p.oh_n; ++oh) {
    float* orow = out + oh * p.ow_n;
    std::fill(orow, orow + p.ow_n, bias);
    for (int64_t kh = 0; kh < p.kh_n; ++kh) {
      const int64_t ih = oh * p.sh - p.ph + kh * p.dh;
      if (ih < 0 || ih >= p.ih_n) continue;
      const float* irow = img + ih * p.iw_n;
      for (int64_t kw = 0; kw < p.kw_n; ++kw) {
        // Output columns whose input column iw = ow*sw - pw + kw*dw lies in [0, iw_n).
        const int64_t iw0 = kw * p.dw - p.pw;
        const int64_t q_lo = std::min(p.ow_n, iw0 >= 0 ? int64_t{0} : (-iw0 + p.sw - 1) / p.sw);
        const int64_t q_hi =
            std::max(q_lo, std::min(p.ow_n, iw0 < p.iw_n ? (p.iw_n - iw0 + p.sw - 1) / p.sw : int64_t{0}));
        if (q_hi > q_lo) DepthwiseRowImpl(irow + iw0 + q_lo * p.sw, wm[kh * p.kw_n + kw], orow + q_lo, q_hi - q_lo, p.sw);
      }
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_
