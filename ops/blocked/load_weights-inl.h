// One vector of packed convolution weights as floats, for Winograd's weight transform
// (winograd-inl.h), which reads a float16 or bfloat16 model's weights in their 16 bits
// (blocked_conv_tile.h) and widens them here, in registers. Widening is exact, so the transform
// computes the float path's U on the widened weights, bit for bit. The blocked kernels that take
// float16 activations (blocked_pool-inl.h, reorder-inl.h) load them the same way and store their
// float results back as float16 with StoreHalf / StoreAs.

#if defined(ONNXFLOW_OPS_BLOCKED_LOAD_WEIGHTS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_LOAD_WEIGHTS_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_LOAD_WEIGHTS_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_LOAD_WEIGHTS_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "ops/blocked/blocked_conv_tile.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/framework/numeric.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// D: a float tag of at most kChannelBlock lanes.
template <class D>
HWY_INLINE hn::Vec<D> LoadWeights(D d, const float* HWY_RESTRICT w) {
  return hn::LoadU(d, w);
}

template <class D>
HWY_INLINE hn::Vec<D> LoadWeights(D d, const hwy::float16_t* HWY_RESTRICT w) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // Highway's AVX2 and AVX-512 targets imply F16C: one vcvtph2ps.
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, D>(), w));
#else
  // Elsewhere Highway emulates the conversion, and 1.0.3's emulation maps infinities and NaNs to
  // finite numbers: the exact scalar conversion instead (these targets are fallbacks).
  HWY_ALIGN float wide[kChannelBlock];
  const uint16_t* bits = reinterpret_cast<const uint16_t*>(w);
  for (size_t i = 0; i < hn::Lanes(d); ++i) wide[i] = HalfToFloat(bits[i]);
  return hn::Load(d, wide);
#endif
}

template <class D>
HWY_INLINE hn::Vec<D> LoadWeights(D d, const hwy::bfloat16_t* HWY_RESTRICT w) {
  // A bfloat16 is a float's upper half: exact on every target.
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::bfloat16_t, D>(), w));
}

// The lanes of `v` as float16 at `p`, rounded to nearest even (FloatToHalf's rounding, so a kernel
// computing in float and storing here gives FloatToHalf of the float kernel's result). D: a float
// tag of at most kChannelBlock lanes.
template <class D>
HWY_INLINE void StoreHalf(D d, hn::Vec<D> v, hwy::float16_t* HWY_RESTRICT p) {
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
  // F16C's vcvtps2ph, rounding to nearest even.
  const hn::Rebind<hwy::float16_t, D> dh;
  hn::StoreU(hn::DemoteTo(dh, v), dh, p);
#else
  // Highway 1.0.3 emulates the conversion elsewhere without rounding to nearest even (and maps
  // infinities and NaNs wrongly): the exact scalar conversion instead.
  HWY_ALIGN float wide[kChannelBlock];
  hn::Store(v, d, wide);
  uint16_t* bits = reinterpret_cast<uint16_t*>(p);
  for (size_t i = 0; i < hn::Lanes(d); ++i) bits[i] = FloatToHalf(wide[i]);
#endif
}

// The lanes of `v` stored as T, the element type of the kernel's output (float or float16): the
// store that matches LoadWeights in kernels templated on that type.
template <class D>
HWY_INLINE void StoreAs(D d, hn::Vec<D> v, float* HWY_RESTRICT p) {
  hn::StoreU(v, d, p);
}

template <class D>
HWY_INLINE void StoreAs(D d, hn::Vec<D> v, hwy::float16_t* HWY_RESTRICT p) {
  StoreHalf(d, v, p);
}

// f(TW()) with TW the type the weights are stored in: float, hwy::float16_t or hwy::bfloat16_t.
template <class F>
HWY_INLINE void WithWeightType(WeightType type, const F& f) {
  switch (type) {
    case WeightType::kFloat16:
      return f(hwy::float16_t());
    case WeightType::kBFloat16:
      return f(hwy::bfloat16_t());
    default:
      return f(float());
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_LOAD_WEIGHTS_INL_H_
