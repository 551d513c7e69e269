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

// A bfloat16 model's weights are widened block by block for every product (ops/math/constant_b.cc),
// so this runs as often as the GEMM's packing: the scalar loop made a bfloat16 BERT-base 15-20%
// slower than its float16 twin (1 thread, 145-156 against 127-130 ms).
void BFloat16ToFloatImpl(const uint16_t* in, float* out, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, hn::LoadU(d16, in + i)))), df, out + i);
  }
  for (; i < n; ++i) out[i] = BFloat16ToFloat(in[i]);
}

// FloatToBFloat16 in lanes: round to nearest even by adding 0x7fff plus the kept part's lowest
// bit, and a NaN's top half with the quiet bit set (rounding could carry a NaN into infinity).
void FloatToBFloat16Impl(const float* in, uint16_t* out, int64_t n) {
  const hn::ScalableTag<float> df;
  const hn::RebindToUnsigned<decltype(df)> du;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto abs_mask = hn::Set(di, 0x7fffffff), inf = hn::Set(di, 0x7f800000);
  const auto one = hn::Set(du, 1u), half_ulp = hn::Set(du, 0x7fffu), quiet = hn::Set(du, 0x40u);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto u = hn::BitCast(du, hn::LoadU(df, in + i));
    const auto top = hn::ShiftRight<16>(u);
    const auto rounded = hn::ShiftRight<16>(hn::Add(hn::Add(u, half_ulp), hn::And(top, one)));
    const auto nan = hn::RebindMask(du, hn::Gt(hn::And(hn::BitCast(di, u), abs_mask), inf));
    const auto bits = hn::IfThenElse(nan, hn::Or(top, quiet), rounded);  // each lane < 2^16
    hn::StoreU(hn::DemoteTo(d16, hn::BitCast(di, bits)), d16, out + i);
  }
  for (; i < n; ++i) out[i] = FloatToBFloat16(in[i]);
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(FloatToHalfImpl);
HWY_EXPORT(HalfToFloatImpl);
HWY_EXPORT(FloatToBFloat16Impl);
HWY_EXPORT(BFloat16ToFloatImpl);

void FloatToHalfArray(const float* in, uint16_t* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(FloatToHalfImpl)(in, out, n);
}

void HalfToFloatArray(const uint16_t* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(HalfToFloatImpl)(in, out, n);
}

void FloatToBFloat16Array(const float* in, uint16_t* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(FloatToBFloat16Impl)(in, out, n);
}

void BFloat16ToFloatArray(const uint16_t* in, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(BFloat16ToFloatImpl)(in, out, n);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
