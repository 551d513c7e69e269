#include "ops/quant_ms/qlinear_simd.h"

#include <cmath>
#include <cstring>
#include <type_traits>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/quant_ms/qlinear_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One vector of float lanes per step, widened from 8-bit values and narrowed back (the cost; the
// float math is two FMAs).
template <bool kMul, typename Q>
void BinaryImpl(const Q* a, bool a_bcast, const Q* b, bool b_bcast, Q* y, int64_t n, const QBinaryParams& p) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<Q, decltype(df)> dq;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  if (n <= 0) return;
  const auto vza = hn::Set(df, p.za), vzb = hn::Set(df, p.zb), vzc = hn::Set(df, p.zc);
  const auto vra = hn::Set(df, p.ra), vrb = hn::Set(df, p.rb);
  const auto vfixed = hn::Set(df, AddFixedPart(p));
  // Clamped before rounding (to the range, whole numbers) so that the conversion never overflows.
  const auto vlo = hn::Set(df, p.lo), vhi = hn::Set(df, p.hi);
  const auto a0 = hn::Set(df, static_cast<float>(a[0])), b0 = hn::Set(df, static_cast<float>(b[0]));
  auto step = [&](const Q* pa, const Q* pb, Q* py) {
    const auto va = a_bcast ? a0 : hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(dq, pa)));
    const auto vb = b_bcast ? b0 : hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(dq, pb)));
    hn::Vec<decltype(df)> v;
    if constexpr (kMul) {
      v = hn::MulAdd(hn::Mul(hn::Sub(va, vza), hn::Sub(vb, vzb)), vra, vzc);
    } else {
      v = hn::MulAdd(vb, vrb, hn::MulAdd(va, vra, vfixed));
    }
    v = hn::Min(hn::Max(v, vlo), vhi);
    hn::StoreU(hn::DemoteTo(dq, hn::NearestInt(v)), dq, py);
  };
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) step(a + i, b + i, y + i);
  if (i < n) {
    // The tail through the same vector code on a padded copy: a result never depends on where a
    // run was cut, on any target (a scalar tail with std::fma differed from the unfused MulAdd of
    // targets without FMA, and from the body wherever the compiler contracted differently).
    HWY_ALIGN Q ta[hn::MaxLanes(df)] = {}, tb[hn::MaxLanes(df)] = {}, ty[hn::MaxLanes(df)];
    const size_t left = static_cast<size_t>(n - i);
    if (!a_bcast) std::memcpy(ta, a + i, left * sizeof(Q));
    if (!b_bcast) std::memcpy(tb, b + i, left * sizeof(Q));
    step(ta, tb, ty);
    std::memcpy(y + i, ty, left * sizeof(Q));
  }
}

void AddU8(const uint8_t* a, bool ab, const uint8_t* b, bool bb, uint8_t* y, int64_t n, const QBinaryParams& p) {
  BinaryImpl<false>(a, ab, b, bb, y, n, p);
}
void AddS8(const int8_t* a, bool ab, const int8_t* b, bool bb, int8_t* y, int64_t n, const QBinaryParams& p) {
  BinaryImpl<false>(a, ab, b, bb, y, n, p);
}
void MulU8(const uint8_t* a, bool ab, const uint8_t* b, bool bb, uint8_t* y, int64_t n, const QBinaryParams& p) {
  BinaryImpl<true>(a, ab, b, bb, y, n, p);
}
void MulS8(const int8_t* a, bool ab, const int8_t* b, bool bb, int8_t* y, int64_t n, const QBinaryParams& p) {
  BinaryImpl<true>(a, ab, b, bb, y, n, p);
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#if defined(__x86_64__)
#include <immintrin.h>
#endif
namespace onnxflow {

HWY_EXPORT(AddU8);
HWY_EXPORT(AddS8);
HWY_EXPORT(MulU8);
HWY_EXPORT(MulS8);

float AddFixedPart(const QBinaryParams& p) { return std::fma(-p.rb, p.zb, std::fma(-p.ra, p.za, p.zc)); }

int32_t RoundSaturate(float v, float zero, float lo, float hi) {
  if (std::isnan(v)) return static_cast<int32_t>(lo);
  return RoundSaturateFinite(v, zero, lo - zero, hi - zero);
}

void QLinearAddU8(const uint8_t* a, bool ab, const uint8_t* b, bool bb, uint8_t* y, int64_t n,
                  const QBinaryParams& p) {
  HWY_DYNAMIC_DISPATCH(AddU8)(a, ab, b, bb, y, n, p);
}
void QLinearAddS8(const int8_t* a, bool ab, const int8_t* b, bool bb, int8_t* y, int64_t n, const QBinaryParams& p) {
  HWY_DYNAMIC_DISPATCH(AddS8)(a, ab, b, bb, y, n, p);
}
void QLinearMulU8(const uint8_t* a, bool ab, const uint8_t* b, bool bb, uint8_t* y, int64_t n,
                  const QBinaryParams& p) {
  HWY_DYNAMIC_DISPATCH(MulU8)(a, ab, b, bb, y, n, p);
}
void QLinearMulS8(const int8_t* a, bool ab, const int8_t* b, bool bb, int8_t* y, int64_t n, const QBinaryParams& p) {
  HWY_DYNAMIC_DISPATCH(MulS8)(a, ab, b, bb, y, n, p);
}

#if defined(__x86_64__)
// AVX-512 VBMI: vpermi2b looks 64 bytes up in a 128-entry table; two of them and the index's top
// bit cover 256 entries, 64 elements in 4 instructions (the scalar loop does about one a cycle).
// Its own target attribute and a CPU check, as qgemm-inl.h's vpdpbusd (Highway 1.0.3's AVX3
// target has no VBMI).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) int64_t ApplyByteTableVbmi(const uint8_t* table,
                                                                                     const uint8_t* x, uint8_t* y,
                                                                                     int64_t n) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  int64_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m512i v = _mm512_loadu_si512(x + i);
    const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
    _mm512_storeu_si512(y + i, _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi));
  }
  return i;
}
#endif

void ApplyByteTable(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n) {
  // A byte gather: no SIMD table lookup wider than 16 entries below AVX-512 VBMI, and this loop
  // already runs at about one element per cycle from L1.
  int64_t i = 0;
#if defined(__x86_64__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  if (vbmi) i = ApplyByteTableVbmi(table, x, y, n);
#endif
  for (; i + 4 <= n; i += 4) {
    y[i] = table[x[i]];
    y[i + 1] = table[x[i + 1]];
    y[i + 2] = table[x[i + 2]];
    y[i + 3] = table[x[i + 3]];
  }
  for (; i < n; ++i) y[i] = table[x[i]];
}

}  // namespace onnxflow
#endif  // HWY_ONCE
