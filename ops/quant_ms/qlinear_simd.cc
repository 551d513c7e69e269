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
    } else if (a_bcast) {  // MLAS folds a broadcast operand into the constant first
      v = hn::MulAdd(vb, vrb, hn::MulAdd(va, vra, vfixed));
    } else {  // B first, as MLAS's AVX2 kernel: A first rounds 2 of 12544 near-ties the other way
      v = hn::MulAdd(va, vra, hn::MulAdd(vb, vrb, vfixed));
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

// Bytes summed 8 at a time into 64-bit lanes (SumsOf8); int8 as uint8 through x ^ 0x80 = x + 128.
template <typename Q>
int64_t SumOfBytesImpl(const Q* q, int64_t n) {
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d8));
  const uint8_t flip = std::is_signed_v<Q> ? 0x80 : 0;
  const uint8_t* x = reinterpret_cast<const uint8_t*>(q);
  const auto vflip = hn::Set(d8, flip);
  auto acc = hn::Zero(d64);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) acc = hn::Add(acc, hn::SumsOf8(hn::Xor(hn::LoadU(d8, x + i), vflip)));
  uint64_t sum = hn::GetLane(hn::SumOfLanes(d64, acc));
  for (; i < n; ++i) sum += static_cast<uint8_t>(x[i] ^ flip);
  return static_cast<int64_t>(sum) - (std::is_signed_v<Q> ? 128 * n : 0);
}

template <typename Q>
void AddBytesImpl(const Q* x, int64_t n, int32_t* sums) {
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<Q, decltype(di)> dq;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(di));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    hn::StoreU(hn::Add(hn::LoadU(di, sums + i), hn::PromoteTo(di, hn::LoadU(dq, x + i))), di, sums + i);
  }
  for (; i < n; ++i) sums[i] += x[i];
}

void AddRunsImpl(const float* row, const int64_t* taps, int64_t tap_count, int64_t n, float* sums) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + 2 * lanes <= n; i += 2 * lanes) {
    auto a = hn::LoadU(d, sums + i), b = hn::LoadU(d, sums + i + lanes);
    for (int64_t t = 0; t < tap_count; ++t) {
      a = hn::Add(a, hn::LoadU(d, row + taps[t] + i));
      b = hn::Add(b, hn::LoadU(d, row + taps[t] + i + lanes));
    }
    hn::StoreU(a, d, sums + i);
    hn::StoreU(b, d, sums + i + lanes);
  }
  for (; i + lanes <= n; i += lanes) {
    auto a = hn::LoadU(d, sums + i);
    for (int64_t t = 0; t < tap_count; ++t) a = hn::Add(a, hn::LoadU(d, row + taps[t] + i));
    hn::StoreU(a, d, sums + i);
  }
  for (; i < n; ++i) {
    for (int64_t t = 0; t < tap_count; ++t) sums[i] += row[taps[t] + i];
  }
}

template <typename Q>
void RequantizeMeansImpl(const float* sums, const float* counts, bool one_count, float count_scale, int64_t n,
                         float y_scale, float y_zero, Q* y) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<Q, decltype(df)> dq;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  const auto vscale = hn::Set(df, y_scale), vzero = hn::Set(df, y_zero), zero = hn::Zero(df);
  const auto vcount_scale = hn::Set(df, count_scale);
  const auto vlo = hn::Set(df, std::is_signed_v<Q> ? -128.f : 0.f);
  const auto vhi = hn::Set(df, std::is_signed_v<Q> ? 127.f : 255.f);
  // Clamped (NaN to lo) before rounding, so the conversion never overflows.
  auto step = [&](const float* s, const float* c, Q* py) {
    const auto count = hn::Mul(vcount_scale, one_count ? hn::Set(df, counts[0]) : hn::LoadU(df, c));
    const auto mean = hn::IfThenElse(hn::Eq(count, zero), zero, hn::Div(hn::Div(hn::LoadU(df, s), count), vscale));
    auto v = hn::Add(mean, vzero);
    v = hn::IfThenElse(hn::IsNaN(v), vlo, hn::Min(hn::Max(v, vlo), vhi));
    hn::StoreU(hn::DemoteTo(dq, hn::NearestInt(v)), dq, py);
  };
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) step(sums + i, counts + (one_count ? 0 : i), y + i);
  if (i < n) {  // the tail through the same vector code on a padded copy
    HWY_ALIGN float ts[hn::MaxLanes(df)] = {}, tc[hn::MaxLanes(df)] = {};
    HWY_ALIGN Q ty[hn::MaxLanes(df)];
    const size_t left = static_cast<size_t>(n - i);
    std::memcpy(ts, sums + i, left * sizeof(float));
    if (!one_count) std::memcpy(tc, counts + i, left * sizeof(float));
    step(ts, tc, ty);
    std::memcpy(y + i, ty, left * sizeof(Q));
  }
}

void RequantizeMeansU8(const float* s, const float* c, bool one, float cs, int64_t n, float ys, float yz,
                       uint8_t* y) {
  RequantizeMeansImpl(s, c, one, cs, n, ys, yz, y);
}
void RequantizeMeansS8(const float* s, const float* c, bool one, float cs, int64_t n, float ys, float yz,
                       int8_t* y) {
  RequantizeMeansImpl(s, c, one, cs, n, ys, yz, y);
}

void SplitPhasesImpl(const float* row, int64_t n, int64_t stride, int64_t phase_len, float* phases) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t j = 0;  // the first index of each phase not written yet
  if (stride == 2) {
    for (; (j + lanes) * 2 <= n; j += lanes) {
      hn::Vec<decltype(d)> even, odd;
      hn::LoadInterleaved2(d, row + j * 2, even, odd);
      hn::StoreU(even, d, phases + j);
      hn::StoreU(odd, d, phases + phase_len + j);
    }
  } else if (stride == 3) {
    for (; (j + lanes) * 3 <= n; j += lanes) {
      hn::Vec<decltype(d)> v0, v1, v2;
      hn::LoadInterleaved3(d, row + j * 3, v0, v1, v2);
      hn::StoreU(v0, d, phases + j);
      hn::StoreU(v1, d, phases + phase_len + j);
      hn::StoreU(v2, d, phases + 2 * phase_len + j);
    }
  }
  for (int64_t r = 0; r < stride; ++r) {
    for (int64_t i = j, at = j * stride + r; at < n; ++i, at += stride) phases[r * phase_len + i] = row[at];
  }
}

int64_t SumOfU8(const uint8_t* x, int64_t n) { return SumOfBytesImpl(x, n); }
int64_t SumOfS8(const int8_t* x, int64_t n) { return SumOfBytesImpl(x, n); }
void AddU8Bytes(const uint8_t* x, int64_t n, int32_t* sums) { AddBytesImpl(x, n, sums); }
void AddS8Bytes(const int8_t* x, int64_t n, int32_t* sums) { AddBytesImpl(x, n, sums); }

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
HWY_EXPORT(SplitPhasesImpl);
HWY_EXPORT(AddRunsImpl);
HWY_EXPORT(RequantizeMeansU8);
HWY_EXPORT(RequantizeMeansS8);
HWY_EXPORT(SumOfU8);
HWY_EXPORT(SumOfS8);
HWY_EXPORT(AddU8Bytes);
HWY_EXPORT(AddS8Bytes);

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

void AddRuns(const float* row, const int64_t* taps, int64_t tap_count, int64_t n, float* sums) {
  HWY_DYNAMIC_DISPATCH(AddRunsImpl)(row, taps, tap_count, n, sums);
}
void RequantizeMeans(const float* sums, const float* counts, bool one_count, float count_scale, int64_t n,
                     float y_scale, float y_zero, uint8_t* y) {
  HWY_DYNAMIC_DISPATCH(RequantizeMeansU8)(sums, counts, one_count, count_scale, n, y_scale, y_zero, y);
}
void RequantizeMeans(const float* sums, const float* counts, bool one_count, float count_scale, int64_t n,
                     float y_scale, float y_zero, int8_t* y) {
  HWY_DYNAMIC_DISPATCH(RequantizeMeansS8)(sums, counts, one_count, count_scale, n, y_scale, y_zero, y);
}
void SplitPhases(const float* row, int64_t n, int64_t stride, int64_t phase_len, float* phases) {
  HWY_DYNAMIC_DISPATCH(SplitPhasesImpl)(row, n, stride, phase_len, phases);
}
int64_t SumOfBytes(const uint8_t* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumOfU8)(x, n); }
int64_t SumOfBytes(const int8_t* x, int64_t n) { return HWY_DYNAMIC_DISPATCH(SumOfS8)(x, n); }
void AddBytes(const uint8_t* x, int64_t n, int32_t* sums) { HWY_DYNAMIC_DISPATCH(AddU8Bytes)(x, n, sums); }
void AddBytes(const int8_t* x, int64_t n, int32_t* sums) { HWY_DYNAMIC_DISPATCH(AddS8Bytes)(x, n, sums); }

#if defined(__x86_64__)
// AVX-512 VBMI: vpermi2b looks 64 bytes up in a 128-entry table; two of them and the index's top
// bit cover 256 entries, 64 elements in 4 instructions (the scalar loop does about one a cycle).
// Its own target attribute and a CPU check, as qgemm-inl.h's vpdpbusd (Highway 1.0.3's AVX3
// target has no VBMI). The table is loaded once for all rows: per call it outweighed a 16-byte
// row (YOLOv8n's channels-last C2f concatenation of 160 x 160 pixels, 3 runs of 16 bytes each,
// 0.56 ms).
__attribute__((target("avx512f,avx512bw,avx512vbmi"))) inline __m512i LookUpVbmi(__m512i v, __m512i t0, __m512i t1,
                                                                                   __m512i t2, __m512i t3) {
  const __m512i lo = _mm512_permutex2var_epi8(t0, v, t1), hi = _mm512_permutex2var_epi8(t2, v, t3);
  return _mm512_mask_blend_epi8(_mm512_movepi8_mask(v), lo, hi);
}

__attribute__((target("avx512f,avx512bw,avx512vbmi"))) void ApplyByteTableVbmi(const uint8_t* table,
                                                                                const uint8_t* x, int64_t xs,
                                                                                uint8_t* y, int64_t ys, int64_t n,
                                                                                int64_t rows) {
  const __m512i t0 = _mm512_loadu_si512(table), t1 = _mm512_loadu_si512(table + 64);
  const __m512i t2 = _mm512_loadu_si512(table + 128), t3 = _mm512_loadu_si512(table + 192);
  // The tail under a mask (masked-off bytes are neither read nor written): DenseNet's
  // QLinearConcat requantizes a 32-channel run per pixel, all of it tail.
  const int64_t whole = n / 64 * 64;
  const __mmask64 tail = n > whole ? (~0ULL) >> (64 - (n - whole)) : 0;
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* xr = x + r * xs;
    uint8_t* yr = y + r * ys;
    for (int64_t i = 0; i < whole; i += 64) _mm512_storeu_si512(yr + i, LookUpVbmi(_mm512_loadu_si512(xr + i), t0, t1, t2, t3));
    if (tail != 0) {
      _mm512_mask_storeu_epi8(yr + whole, tail, LookUpVbmi(_mm512_maskz_loadu_epi8(tail, xr + whole), t0, t1, t2, t3));
    }
  }
}
#endif

void ApplyByteTableRows(const uint8_t* table, const uint8_t* x, int64_t x_stride, uint8_t* y, int64_t y_stride,
                        int64_t n, int64_t rows) {
#if defined(__x86_64__)
  static const bool vbmi = __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("avx512bw");
  if (vbmi) return ApplyByteTableVbmi(table, x, x_stride, y, y_stride, n, rows);
#endif
  // A byte gather: no SIMD table lookup wider than 16 entries below AVX-512 VBMI, and this loop
  // already runs at about one element per cycle from L1.
  for (int64_t r = 0; r < rows; ++r) {
    const uint8_t* xr = x + r * x_stride;
    uint8_t* yr = y + r * y_stride;
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
      yr[i] = table[xr[i]];
      yr[i + 1] = table[xr[i + 1]];
      yr[i + 2] = table[xr[i + 2]];
      yr[i + 3] = table[xr[i + 3]];
    }
    for (; i < n; ++i) yr[i] = table[xr[i]];
  }
}

void ApplyByteTable(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n) {
  ApplyByteTableRows(table, x, n, y, n, n, 1);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
