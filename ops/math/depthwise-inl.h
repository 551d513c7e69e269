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
#include "ops/math/activate-inl.h"
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

// out[0, count) = act(acc + addend) (the addend may be null): the epilogue of one output vector.
template <class D>
HWY_INLINE void StoreOutput(D d, hn::Vec<D> acc, const float* HWY_RESTRICT addend, const ActivationSpec& act,
                            float* HWY_RESTRICT out, int64_t count) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (count >= lanes) {
    if (addend != nullptr) acc = hn::Add(acc, hn::LoadU(d, addend));
    hn::StoreU(Activate(d, act, acc), d, out);
    return;
  }
#if HWY_TARGET <= HWY_AVX2  // masked loads and stores touch only the first `count` floats
  const auto first = hn::FirstN(d, static_cast<size_t>(count));
  if (addend != nullptr) acc = hn::Add(acc, hn::MaskedLoad(first, d, addend));
  hn::BlendedStore(Activate(d, act, acc), first, d, out);
#else
  HWY_ALIGN float tail[hn::MaxLanes(d)];
  hn::Store(acc, d, tail);
  for (int64_t i = 0; i < count; ++i) tail[i] += addend != nullptr ? addend[i] : 0.0f;
  hn::Store(Activate(d, act, hn::Load(d, tail)), d, tail);
  std::copy(tail, tail + count, out);
#endif
}

#if HWY_TARGET <= HWY_AVX2  // native masked loads: masked-off lanes are not read at all

// Lanes j of a vector of input columns [c0, c0 + lanes) with 0 <= c0 + j < width.
template <class D>
HWY_INLINE hn::Mask<D> ColumnsInside(D d, int64_t c0, int64_t width) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t lo = std::min(std::max<int64_t>(-c0, 0), lanes);
  const int64_t hi = std::min(std::max<int64_t>(width - c0, 0), lanes);
  return hn::AndNot(hn::FirstN(d, static_cast<size_t>(lo)), hn::FirstN(d, static_cast<size_t>(hi)));
}

// The taps' column masks of the output vector at column q (its lanes whose input columns lie
// inside the row; `hi` for the second vector a stride of 2 reads). True when every lane of every
// tap is inside: the vector then loads without masks.
template <int64_t kStride, class D>
HWY_INLINE bool TapMasks(D d, const DepthwisePlane& p, int64_t q, int64_t count, hn::Mask<D>* lo, hn::Mask<D>* hi) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  bool clear = count == lanes;
  for (int64_t kw = 0; kw < p.kw_n; ++kw) {
    const int64_t c0 = q * kStride - p.pw + kw * p.dw;  // lane j reads column c0 + kStride * j
    lo[kw] = ColumnsInside(d, c0, p.iw_n);
    if (kStride == 2) hi[kw] = ColumnsInside(d, c0 + lanes, p.iw_n);
    clear = clear && c0 >= 0 && c0 + kStride * lanes <= p.iw_n;
  }
  return clear;
}

// One tap's input columns for an output vector: `at` is the tap's first column in the row.
template <int64_t kStride, class D>
HWY_INLINE hn::Vec<D> LoadTap(D d, const float* at, bool clear, hn::Mask<D> lo, hn::Mask<D> hi) {
  const auto v = clear ? hn::LoadU(d, at) : hn::MaskedLoad(lo, d, at);
  if (kStride == 1) return v;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  return hn::ConcatEven(d, clear ? hn::LoadU(d, at + lanes) : hn::MaskedLoad(hi, d, at + lanes), v);
}

// Column strides 1 and 2 straight from the image: each output vector sums its taps in a register,
// a tap's lanes whose column falls in the padding are masked off, and a stride of 2 takes the
// even lanes of two vectors. No padded copy of the plane, no pass over the output afterwards.
// Columns outside, rows inside: a tap's masks are the same on every row, and vectors clear of the
// padding load without masks. Kernels of at most kDepthwiseMaxDirectTaps columns.
template <int64_t kStride>
HWY_INLINE void DepthwiseDirect(const DepthwisePlane& p, const float* HWY_RESTRICT img, const float* HWY_RESTRICT wm,
                                float bias, const float* HWY_RESTRICT addend, const ActivationSpec& act,
                                float* HWY_RESTRICT out) {
  const hn::ScalableTag<float> d;
  using M = hn::Mask<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t q = 0; q < p.ow_n; q += lanes) {
    const int64_t count = std::min(lanes, p.ow_n - q);
    M lo[kDepthwiseMaxDirectTaps], hi[kDepthwiseMaxDirectTaps];
    const bool clear = TapMasks<kStride>(d, p, q, count, lo, hi);
    for (int64_t oh = 0; oh < p.oh_n; ++oh) {
      auto acc = hn::Set(d, bias);
      for (int64_t kh = 0; kh < p.kh_n; ++kh) {
        const int64_t ih = oh * p.sh - p.ph + kh * p.dh;
        if (ih < 0 || ih >= p.ih_n) continue;
        const float* tap = img + ih * p.iw_n + q * kStride - p.pw;
        for (int64_t kw = 0; kw < p.kw_n; ++kw, tap += p.dw) {
          acc = hn::MulAdd(hn::Set(d, wm[kh * p.kw_n + kw]), LoadTap<kStride>(d, tap, clear, lo[kw], hi[kw]), acc);
        }
      }
      const int64_t at = oh * p.ow_n + q;
      StoreOutput(d, acc, addend != nullptr ? addend + at : nullptr, act, out + at, count);
    }
  }
}

// The 3x3 undilated kernel (nearly every depthwise convolution in MobileNets and ShuffleNets)
// computes kRows output rows at once: each input row's tap vector is loaded once and feeds every
// output row whose window holds it, the nine weights stay in registers, and the rows' sums are
// independent chains (one row alone waits on its FMAs' latency).
template <int64_t kStride>
HWY_INLINE void Depthwise3x3Rows(const DepthwisePlane& p, const float* HWY_RESTRICT img,
                                 const float* HWY_RESTRICT wm, float bias, const float* HWY_RESTRICT addend,
                                 const ActivationSpec& act, float* HWY_RESTRICT out) {
  constexpr int64_t kK = 3, kRows = 4, kInRows = (kRows - 1) * kStride + kK;
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  using M = hn::Mask<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  V w[kK * kK];
  for (int64_t t = 0; t < kK * kK; ++t) w[t] = hn::Set(d, wm[t]);
  for (int64_t q = 0; q < p.ow_n; q += lanes) {
    const int64_t count = std::min(lanes, p.ow_n - q);
    M lo[kK], hi[kK];
    const bool clear = TapMasks<kStride>(d, p, q, count, lo, hi);
    for (int64_t oh0 = 0; oh0 < p.oh_n; oh0 += kRows) {
      V acc[kRows];
      for (int64_t r = 0; r < kRows; ++r) acc[r] = hn::Set(d, bias);
      const int64_t ih0 = oh0 * kStride - p.ph;
#pragma GCC unroll 16
      for (int64_t i = 0; i < kInRows; ++i) {
        if (ih0 + i < 0 || ih0 + i >= p.ih_n) continue;
        const float* tap = img + (ih0 + i) * p.iw_n + q * kStride - p.pw;
#pragma GCC unroll 3
        for (int64_t kw = 0; kw < kK; ++kw) {
          const V v = LoadTap<kStride>(d, tap + kw, clear, lo[kw], hi[kw]);
#pragma GCC unroll 4
          for (int64_t r = 0; r < kRows; ++r) {
            const int64_t kh = i - r * kStride;  // a constant once the loops unroll
            if (kh >= 0 && kh < kK) acc[r] = hn::MulAdd(w[kh * kK + kw], v, acc[r]);
          }
        }
      }
      for (int64_t r = 0; r < kRows && oh0 + r < p.oh_n; ++r) {
        const int64_t at = (oh0 + r) * p.ow_n + q;
        StoreOutput(d, acc[r], addend != nullptr ? addend + at : nullptr, act, out + at, count);
      }
    }
  }
}

template <int64_t kStride>
HWY_INLINE void DepthwiseDirectStride(const DepthwisePlane& p, const float* HWY_RESTRICT img,
                                      const float* HWY_RESTRICT wm, float bias, const float* HWY_RESTRICT addend,
                                      const ActivationSpec& act, float* HWY_RESTRICT out) {
  if (p.kh_n == 3 && p.kw_n == 3 && p.dh == 1 && p.dw == 1 && p.sh == kStride) {
    return Depthwise3x3Rows<kStride>(p, img, wm, bias, addend, act, out);
  }
  DepthwiseDirect<kStride>(p, img, wm, bias, addend, act, out);
}

#endif  // HWY_TARGET <= HWY_AVX2

// Whether DepthwisePlaneImpl needs DepthwiseScratch floats of scratch for this plane.
HWY_INLINE bool DepthwiseUsesScratchImpl(const DepthwisePlane& p) {
#if HWY_TARGET <= HWY_AVX2
  if (p.sw <= 2 && p.kw_n <= kDepthwiseMaxDirectTaps) return false;
#endif
  return p.sw <= 2 && p.kw_n <= kDepthwiseMaxFastTaps;
}

// One output plane: out = act(bias + the k_h x k_w shifted input rows, each weighted, + addend).
// The whole plane runs in one dispatched call so that the row kernel inlines (a call per row and
// tap cost more than the arithmetic on 7..56-pixel rows).
void DepthwisePlaneImpl(const DepthwisePlane& p, const float* HWY_RESTRICT img, const float* HWY_RESTRICT wm,
                        float bias, const float* HWY_RESTRICT addend, const ActivationSpec& act,
                        float* HWY_RESTRICT out, float* HWY_RESTRICT scratch) {
#if HWY_TARGET <= HWY_AVX2
  if (p.sw <= 2 && p.kw_n <= kDepthwiseMaxDirectTaps) {
    if (p.sw == 1) return DepthwiseDirectStride<1>(p, img, wm, bias, addend, act, out);
    return DepthwiseDirectStride<2>(p, img, wm, bias, addend, act, out);
  }
#endif
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  if (DepthwiseUsesScratchImpl(p)) {
    // Without masked loads: copy the plane once with its padding (scratch: DepthwiseScratch
    // floats); a row stride of 2 keeps its even and odd columns apart, so tap kw of consecutive
    // outputs is again a contiguous run (phase (kw*dw) % 2, offset (kw*dw) / 2). Then every output
    // vector sums all taps in a register.
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
    // Tail vectors of the last row read past it (their extra lanes are dropped).
    std::fill(scratch + rows * s * hp, scratch + DepthwisePlaneFloats(p), 0.0f);
    for (int64_t oh = 0; oh < p.oh_n; ++oh) {
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
        const int64_t at = oh * p.ow_n + q;
        StoreOutput(d, acc, addend != nullptr ? addend + at : nullptr, act, out + at, std::min(lanes, p.ow_n - q));
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
  const int64_t plane = p.oh_n * p.ow_n;
  for (int64_t q = 0; q < plane; q += lanes) {
    const int64_t count = std::min(lanes, plane - q);
    HWY_ALIGN float sums[hn::MaxLanes(d)] = {};
    std::copy(out + q, out + q + count, sums);
    StoreOutput(d, hn::Load(d, sums), addend != nullptr ? addend + q : nullptr, act, out + q, count);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_
