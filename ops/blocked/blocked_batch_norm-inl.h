// SIMD part of the blocked BatchNormalization (blocked_batch_norm.cc): with the channels in the
// lanes, a pixel's 16 channels are one multiply-add by the block's scales and shifts, then the
// fused activation. X and Y are float, or both float16 (T): a float16 pixel is widened as it is
// loaded and rounded to nearest even as it is stored (load_weights-inl.h), the arithmetic in
// between the float path's. Compiled once per CPU target through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_BLOCKED_BLOCKED_BATCH_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_BLOCKED_BATCH_NORM_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_BLOCKED_BATCH_NORM_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_BLOCKED_BATCH_NORM_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/load_weights-inl.h"
#include "ops/math/activate-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// y = act(x * scale + shift) for `pixels` pixels of one block; scale and shift are the block's 16.
template <typename T>
void ScaleShiftPixels(const T* HWY_RESTRICT x, int64_t pixels, const float* HWY_RESTRICT scale,
                      const float* HWY_RESTRICT shift, const ActivationSpec& activation, T* HWY_RESTRICT y) {
  const hn::CappedTag<float, kChannelBlock> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  WithEpilogueKind(activation, [&](auto tag) {
    constexpr EpilogueKind kKind = decltype(tag)::value;
    for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
      const auto s = hn::LoadU(d, scale + lane0), b = hn::LoadU(d, shift + lane0);
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t at = p * kChannelBlock + lane0;
        StoreAs(d, ApplyEpilogue<kKind>(d, activation, hn::MulAdd(LoadWeights(d, x + at), s, b)), y + at);
      }
    }
  });
}

// y = act(prelu(x * scale + shift)): the same with a per-channel negative slope after the affine
// map (a PRelu of per-channel slopes, graph/blocked_layout.cc, taken into the normalization before
// it when there is one). NaN stays NaN: it is not below zero.
template <typename T>
void ScaleShiftPReluPixels(const T* HWY_RESTRICT x, int64_t pixels, const float* HWY_RESTRICT scale,
                           const float* HWY_RESTRICT shift, const float* HWY_RESTRICT slope,
                           const ActivationSpec& activation, T* HWY_RESTRICT y) {
  const hn::CappedTag<float, kChannelBlock> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  WithEpilogueKind(activation, [&](auto tag) {
    constexpr EpilogueKind kKind = decltype(tag)::value;
    for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
      const auto s = hn::LoadU(d, scale + lane0), b = hn::LoadU(d, shift + lane0), a = hn::LoadU(d, slope + lane0);
      for (int64_t p = 0; p < pixels; ++p) {
        const int64_t at = p * kChannelBlock + lane0;
        const auto v = hn::MulAdd(LoadWeights(d, x + at), s, b);
        const auto r = hn::IfThenElse(hn::Lt(v, hn::Zero(d)), hn::Mul(v, a), v);
        StoreAs(d, ApplyEpilogue<kKind>(d, activation, r), y + at);
      }
    }
  });
}

// HWY_EXPORT takes one function per name, not a template: one per element type.
void ScaleShiftPixelsImpl(const float* x, int64_t pixels, const float* scale, const float* shift,
                          const ActivationSpec& activation, float* y) {
  ScaleShiftPixels(x, pixels, scale, shift, activation, y);
}
void ScaleShiftPixelsHalfImpl(const hwy::float16_t* x, int64_t pixels, const float* scale, const float* shift,
                              const ActivationSpec& activation, hwy::float16_t* y) {
  ScaleShiftPixels(x, pixels, scale, shift, activation, y);
}
void ScaleShiftPReluPixelsImpl(const float* x, int64_t pixels, const float* scale, const float* shift,
                               const float* slope, const ActivationSpec& activation, float* y) {
  ScaleShiftPReluPixels(x, pixels, scale, shift, slope, activation, y);
}
void ScaleShiftPReluPixelsHalfImpl(const hwy::float16_t* x, int64_t pixels, const float* scale, const float* shift,
                                   const float* slope, const ActivationSpec& activation, hwy::float16_t* y) {
  ScaleShiftPReluPixels(x, pixels, scale, shift, slope, activation, y);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_BLOCKED_BATCH_NORM_INL_H_
