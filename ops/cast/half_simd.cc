#include "ops/cast/half_simd.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/cast/half_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/framework/numeric.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Highway's AVX2 and AVX3 targets imply F16C; its emulation on older targets does not round to
// nearest even, so those use the scalar conversion.
#if HWY_ARCH_X86 && HWY_TARGET <= HWY_AVX2
#define ONNXFLOW_HALF_SIMD 1
#else
#define ONNXFLOW_HALF_SIMD 0
#endif

void FloatToHalfImpl(const float* in, uint16_t* out, int64_t n) {
  int64_t i = 0;
#if ONNXFLOW_HALF_SIMD
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  hwy::float16_t* out_h = reinterpret_cast<hwy::float16_t*>(out);
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::DemoteTo(dh, hn::LoadU(df, in + i)), dh, out_h + i);
#endif
  for (; i < n; ++i) out[i] = FloatToHalf(in[i]);
}

void HalfToFloatImpl(const uint16_t* in, float* out, int64_t n) {
  int64_t i = 0;
#if ONNXFLOW_HALF_SIMD
  const hn::ScalableTag<float> df;
  const hn::Rebind<hwy::float16_t, decltype(df)> dh;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const hwy::float16_t* in_h = reinterpret_cast<const hwy::float16_t*>(in);
  for (; i + lanes <= n; i += lanes) hn::StoreU(hn::PromoteTo(df, hn::LoadU(dh, in_h + i)), df, out + i);
#endif
  for (; i < n; ++i) out[i] = HalfToFloat(in[i]);
}

#undef ONNXFLOW_HALF_SIMD

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(FloatToHalfImpl);
HWY_EXPORT(HalfToFloatImpl);

void FloatToHalfArray(const float* in, uint16_t* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(FloatToHalfImpl)(in, out, n);
}

void HalfToFloatArray(const uint16_t* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(HalfToFloatImpl)(in, out, n);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
