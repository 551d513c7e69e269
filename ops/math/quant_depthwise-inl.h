// SIMD body of the 8-bit depthwise convolution (quant_depthwise.cc): one output row of
// channels-last pixels, each a sum over its window's taps per vector of channels, requantized.
// Compiled per CPU target through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_MATH_QUANT_DEPTHWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_MATH_QUANT_DEPTHWISE_INL_H_
#undef ONNXFLOW_OPS_MATH_QUANT_DEPTHWISE_INL_H_
#else
#define ONNXFLOW_OPS_MATH_QUANT_DEPTHWISE_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "hwy/highway.h"
#include "ops/math/quant_depthwise.h"

#if HWY_TARGET == HWY_AVX3
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using QDwTag = hn::ScalableTag<int32_t>;
using QDwVec = hn::Vec<QDwTag>;

// One tap's bytes for a vector of channels, sign- or zero-extended to int32 lanes.
template <bool kSigned>
HWY_INLINE QDwVec LoadTap(QDwTag d, const uint8_t* HWY_RESTRICT p) {
  if (kSigned) return hn::PromoteTo(d, hn::LoadU(hn::Rebind<int8_t, QDwTag>(), reinterpret_cast<const int8_t*>(p)));
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<uint8_t, QDwTag>(), p));
}

// acc += x * w per int32 lane, as the 16-bit pairs of vpmaddwd: x's low half is the byte (its high
// half 0 or -1), w's low half is w' and its high half 0, so each pair is x * w' + 0 exactly.
// vpmulld on sign-extended weights was slower (quant_depthwise_benchmark, 28x28x136 3x3, best of
// 24 on a loaded Zen 4: 62 against 52 us), and so were two taps interleaved into int16 pairs per
// vpmaddwd (256-bit, vpunpcklbw + vpmovzxbw per pair of taps: 68 against 51 us). EMU128 returns
// even and odd products apart (odd: x's high half times 0); SumOf adds them.
// (HWY_SCALAR, compiled but not dispatched here, has no 16-bit pairs: it multiplies int32.)
HWY_INLINE QDwVec MulAcc(QDwTag d, QDwVec x, QDwVec w, QDwVec acc, QDwVec& odd) {
#if HWY_TARGET == HWY_SCALAR
  (void)d;
  (void)odd;
  return hn::Add(acc, hn::Mul(x, hn::ShiftRight<16>(hn::ShiftLeft<16>(w))));
#else
  const hn::Repartition<int16_t, QDwTag> d16;
  return hn::ReorderWidenMulAccumulate(d, hn::BitCast(d16, x), hn::BitCast(d16, w), acc, odd);
#endif
}

HWY_INLINE QDwVec SumOf(QDwVec acc, QDwVec odd) {
#if HWY_TARGET == HWY_SCALAR
  (void)odd;
  return acc;
#else
  return hn::RearrangeToOddPlusEven(acc, odd);
#endif
}

// y = saturate(round_half_even(float(acc) * multiplier) + y_zero), the float operations of the GEMM
// epilogue (qgemm-inl.h), so results are the GEMM path's bit for bit. The product is clamped to
// +-65536 first, as the VNNI epilogue does: any value past it saturates the same way, and the
// conversion never overflows int32 (the generic epilogue, unclamped, agrees below 2^31 - 256).
template <bool kSignedY>
HWY_INLINE void StoreRequantized(QDwTag d, QDwVec acc, const float* HWY_RESTRICT multiplier, int32_t y_zero,
                                 uint8_t* HWY_RESTRICT out, int64_t count) {
#if HWY_TARGET == HWY_AVX3
  // vcvtps2dq (in range: the product is clamped) and a saturating narrowing masked store
  // (vpmovusdb / vpmovsdb), as qgemm-inl.h's VNNI epilogue, in place of NearestInt's overflow
  // fixups and DemoteTo's pack-and-permute: with the store waiting on them, about a third of this
  // loop's samples on MobileNetV2's 112x112x32 layer (perf annotate). The same bits.
  (void)d;
  const __m512 limit = _mm512_set1_ps(65536.0f);
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc.raw), _mm512_loadu_ps(multiplier));
  f = _mm512_min_ps(_mm512_max_ps(f, _mm512_sub_ps(_mm512_setzero_ps(), limit)), limit);
  const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), _mm512_set1_epi32(y_zero));
  const __mmask16 mask = count >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << count) - 1);
  if (kSignedY) {
    _mm512_mask_cvtsepi32_storeu_epi8(out, mask, q);
  } else {
    _mm512_mask_cvtusepi32_storeu_epi8(out, mask, _mm512_max_epi32(q, _mm512_setzero_si512()));
  }
#else
  const hn::Rebind<float, QDwTag> df;
  const auto limit = hn::Set(df, 65536.0f);
  auto f = hn::Mul(hn::ConvertTo(df, acc), hn::LoadU(df, multiplier));
  f = hn::Min(hn::Max(f, hn::Neg(limit)), limit);
  const QDwVec q = hn::Add(hn::NearestInt(f), hn::Set(d, y_zero));
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  HWY_ALIGN uint8_t tail[hn::MaxLanes(d)];
  uint8_t* dst = count == lanes ? out : tail;
  if (kSignedY) {
    const hn::Rebind<int8_t, QDwTag> d8;
    hn::StoreU(hn::DemoteTo(d8, q), d8, reinterpret_cast<int8_t*>(dst));
  } else {
    const hn::Rebind<uint8_t, QDwTag> d8;
    hn::StoreU(hn::DemoteTo(d8, q), d8, dst);
  }
  // A partial vector must not write past the pixel: the next pixel's channels may be another
  // thread's output row.
  if (dst == tail) std::memcpy(out, tail, static_cast<size_t>(count));
#endif
}

// kVecs vectors of channels from channel c of kPix neighbouring pixels (pixel i's taps at
// taps.At(i, t), its output at out + i * p.channels): kPix * kVecs independent sums (one chain
// of vpmaddwd + vpaddd waits on its latency), each tap's weights read once for all of them.
template <bool kSignedX, bool kSignedY, int kPix, int kVecs>
HWY_INLINE void PixelChannels(const QDepthwiseRow& p, const QDepthwiseTaps& taps, int64_t c,
                              uint8_t* HWY_RESTRICT out, int64_t count_last) {
  const QDwTag d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  QDwVec acc[kPix * kVecs], odd[kPix * kVecs];
  for (int v = 0; v < kVecs; ++v) {
    acc[v] = hn::LoadU(d, p.bias + c + v * lanes);
    odd[v] = hn::Zero(d);
    for (int i = 1; i < kPix; ++i) {
      acc[i * kVecs + v] = acc[v];
      odd[i * kVecs + v] = odd[v];
    }
  }
  const int32_t* HWY_RESTRICT w = p.w + c;
  for (int64_t t = 0; t < p.taps; ++t, w += p.cp) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      const QDwVec wv = hn::LoadU(d, w + v * lanes);
#pragma GCC unroll 2
      for (int i = 0; i < kPix; ++i) {
        const uint8_t* x = taps.At(i, t) + c;
        acc[i * kVecs + v] = MulAcc(d, LoadTap<kSignedX>(d, x + v * lanes), wv, acc[i * kVecs + v], odd[i * kVecs + v]);
      }
    }
  }
  for (int i = 0; i < kPix; ++i) {
    for (int v = 0; v < kVecs; ++v) {
      StoreRequantized<kSignedY>(d, SumOf(acc[i * kVecs + v], odd[i * kVecs + v]), p.multiplier + c + v * lanes,
                                 p.y_zero, out + i * p.channels + v * lanes, v + 1 == kVecs ? count_last : lanes);
    }
  }
}

// Blocks of 4 vectors, then single ones, the last maybe partial. A pixel of fewer than 4 vectors
// (MobileNetV2's 112x112x32: 2 on AVX-512) runs two pixels at once, else its one or two chains wait
// on the multiply-add latency. With quant_depthwise.cc's cheaper tap pointers:
// quant_depthwise_benchmark 112/32/1/1, best CPU time of 8, three rounds alternated with the
// build before on a loaded 2-core machine: 558, 544, 330 -> 345, 226, 207 us; 56/144: 364, 333,
// 264 -> 311, 302, 222 us.
template <bool kSignedX, bool kSignedY>
HWY_INLINE void Pixels(const QDepthwiseRow& p, QDepthwiseTaps taps, int64_t pixels, uint8_t* HWY_RESTRICT y) {
  const QDwTag d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if (p.channels < 4 * lanes) {
    for (; i + 2 <= pixels; i += 2, taps = taps.Skip(2), y += 2 * p.channels) {
      int64_t c = 0;
      for (; c + 2 * lanes <= p.channels; c += 2 * lanes) PixelChannels<kSignedX, kSignedY, 2, 2>(p, taps, c, y + c, lanes);
      for (; c < p.channels; c += lanes) {
        PixelChannels<kSignedX, kSignedY, 2, 1>(p, taps, c, y + c, std::min(lanes, p.channels - c));
      }
    }
  }
  for (; i < pixels; ++i, taps = taps.Skip(1), y += p.channels) {
    int64_t c = 0;
    for (; c + 4 * lanes <= p.channels; c += 4 * lanes) PixelChannels<kSignedX, kSignedY, 1, 4>(p, taps, c, y + c, lanes);
    for (; c < p.channels; c += lanes) {
      PixelChannels<kSignedX, kSignedY, 1, 1>(p, taps, c, y + c, std::min(lanes, p.channels - c));
    }
  }
}

#if HWY_TARGET == HWY_AVX3
// vpdpbusd needs avx512vnni, which Highway's AVX3 target does not assume (as qgemm-inl.h's
// kernel): this path runs only when the driver saw VNNI (QGemmUsesVnni).
#define ONNXFLOW_QDW_VNNI_ATTR                                                                        \
  __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512vnni,avx2,fma,bmi,bmi2,f16c,popcnt," \
                        "lzcnt,sse4.2")))

// The VNNI path's operations on a unit of 32 channels (ymm) or 64 (zmm): the same instructions
// (unpacks and packs work within 128-bit lanes at either width).
struct VnniYmm {
  using V = __m256i;
  using F = __m256;
  using Mask = __mmask32;
  static constexpr int64_t kChannels = 32;
  static ONNXFLOW_QDW_VNNI_ATTR V Load(const void* p) { return _mm256_loadu_si256(static_cast<const V*>(p)); }
  static ONNXFLOW_QDW_VNNI_ATTR V Zero() { return _mm256_setzero_si256(); }
  static ONNXFLOW_QDW_VNNI_ATTR V Flip(V v) { return _mm256_xor_si256(v, _mm256_set1_epi8(static_cast<char>(0x80))); }
  static ONNXFLOW_QDW_VNNI_ATTR V Lo8(V a, V b) { return _mm256_unpacklo_epi8(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V Hi8(V a, V b) { return _mm256_unpackhi_epi8(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V Lo16(V a, V b) { return _mm256_unpacklo_epi16(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V Hi16(V a, V b) { return _mm256_unpackhi_epi16(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V Dot(V acc, V x, const void* w) { return _mm256_dpbusd_epi32(acc, x, Load(w)); }
  static ONNXFLOW_QDW_VNNI_ATTR V DotOnes(V acc, V x) { return _mm256_dpbusd_epi32(acc, x, _mm256_set1_epi8(1)); }
  static ONNXFLOW_QDW_VNNI_ATTR V AddMul(V acc, V a, const int32_t* b) {
    return _mm256_add_epi32(acc, _mm256_mullo_epi32(a, Load(b)));
  }
  static ONNXFLOW_QDW_VNNI_ATTR V Scale(V acc, const float* m) {
    const F f = _mm256_mul_ps(_mm256_cvtepi32_ps(acc), _mm256_loadu_ps(m));
    return _mm256_cvtps_epi32(_mm256_min_ps(_mm256_set1_ps(65536.0f), f));
  }
  static ONNXFLOW_QDW_VNNI_ATTR V Pack32(V a, V b) { return _mm256_packs_epi32(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V AddZero(V a, int32_t z) { return _mm256_adds_epi16(a, _mm256_set1_epi16(static_cast<int16_t>(z))); }
  static ONNXFLOW_QDW_VNNI_ATTR V Pack16(V a, V b, bool is_signed) {
    return is_signed ? _mm256_packs_epi16(a, b) : _mm256_packus_epi16(a, b);
  }
  static ONNXFLOW_QDW_VNNI_ATTR void Store(uint8_t* p, V v, int64_t count) {
    if (count >= kChannels) {
      _mm256_storeu_si256(reinterpret_cast<V*>(p), v);
    } else {
      _mm256_mask_storeu_epi8(p, static_cast<Mask>((uint64_t{1} << count) - 1), v);
    }
  }
};

struct VnniZmm {
  using V = __m512i;
  using F = __m512;
  using Mask = __mmask64;
  static constexpr int64_t kChannels = 64;
  static ONNXFLOW_QDW_VNNI_ATTR V Load(const void* p) { return _mm512_loadu_si512(p); }
  static ONNXFLOW_QDW_VNNI_ATTR V Zero() { return _mm512_setzero_si512(); }
  static ONNXFLOW_QDW_VNNI_ATTR V Flip(V v) { return _mm512_xor_si512(v, _mm512_set1_epi8(static_cast<char>(0x80))); }
  static ONNXFLOW_QDW_VNNI_ATTR V Lo8(V a, V b) { return _mm512_unpacklo_epi8(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V Hi8(V a, V b) { return _mm512_unpackhi_epi8(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V Lo16(V a, V b) { return _mm512_unpacklo_epi16(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V Hi16(V a, V b) { return _mm512_unpackhi_epi16(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V Dot(V acc, V x, const void* w) { return _mm512_dpbusd_epi32(acc, x, Load(w)); }
  static ONNXFLOW_QDW_VNNI_ATTR V DotOnes(V acc, V x) { return _mm512_dpbusd_epi32(acc, x, _mm512_set1_epi8(1)); }
  static ONNXFLOW_QDW_VNNI_ATTR V AddMul(V acc, V a, const int32_t* b) {
    return _mm512_add_epi32(acc, _mm512_mullo_epi32(a, Load(b)));
  }
  static ONNXFLOW_QDW_VNNI_ATTR V Scale(V acc, const float* m) {
    const F f = _mm512_mul_ps(_mm512_cvtepi32_ps(acc), _mm512_loadu_ps(m));
    return _mm512_cvtps_epi32(_mm512_min_ps(_mm512_set1_ps(65536.0f), f));
  }
  static ONNXFLOW_QDW_VNNI_ATTR V Pack32(V a, V b) { return _mm512_packs_epi32(a, b); }
  static ONNXFLOW_QDW_VNNI_ATTR V AddZero(V a, int32_t z) { return _mm512_adds_epi16(a, _mm512_set1_epi16(static_cast<int16_t>(z))); }
  static ONNXFLOW_QDW_VNNI_ATTR V Pack16(V a, V b, bool is_signed) {
    return is_signed ? _mm512_packs_epi16(a, b) : _mm512_packus_epi16(a, b);
  }
  static ONNXFLOW_QDW_VNNI_ATTR void Store(uint8_t* p, V v, int64_t count) {
    if (count >= kChannels) {
      _mm512_storeu_si512(p, v);
    } else {
      _mm512_mask_storeu_epi8(p, (Mask{1} << count) - 1, v);
    }
  }
};

// Four taps' rows of a unit interleaved per channel (Lo8/Hi8 pair taps 0-1 and 2-3, Lo16/Hi16
// pair the pairs: within each 128-bit lane vector k gets channels 4k..4k+3, the 4 taps' bytes of
// each in one int32), each vector times its weights (w: 4 vectors) into acc; with kOffsets also
// times ones into xsum (the taps' sum of x per channel).
template <class T, bool kOffsets>
ONNXFLOW_QDW_VNNI_ATTR HWY_INLINE void VnniGroup(typename T::V x0, typename T::V x1, typename T::V x2,
                                                 typename T::V x3, const int8_t* HWY_RESTRICT w, typename T::V* acc,
                                                 typename T::V* xsum) {
  const typename T::V a = T::Lo8(x0, x1), b = T::Hi8(x0, x1), d = T::Lo8(x2, x3), e = T::Hi8(x2, x3);
  const typename T::V v[4] = {T::Lo16(a, d), T::Hi16(a, d), T::Lo16(b, e), T::Hi16(b, e)};
  constexpr int64_t kBytes = T::kChannels;  // one vector of weights
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    acc[k] = T::Dot(acc[k], v[k], w + k * kBytes);
    if (kOffsets) xsum[k] = T::DotOnes(xsum[k], v[k]);
  }
}

// One unit (from channel c) of kPix neighbouring pixels (pixel i's taps at taps.At(i, t), its
// output at out + i * p.channels): a VnniGroup per 4 taps, then the requantization of
// StoreRequantized, except that float(acc) * multiplier is clamped only at +65536: below -2^31
// vcvtps2dq answers -2^31, which saturates as the exact value would once the zero point is added
// after the narrowing to int16 (with saturation). (A NaN, from a multiplier of inf or NaN, stays
// NaN through min(65536, f), whose second operand it is, and ends at the lowest value as
// StoreRequantized's max(f, -65536) puts it.) packs_epi32 and packs/packus_epi16 put the lanes
// back in channel order as they narrow.
template <class T, int kPix, bool kSignedX, bool kSignedY, bool kOffsets>
ONNXFLOW_QDW_VNNI_ATTR HWY_INLINE void VnniUnit(const QDepthwiseRow& p, const QDepthwiseTaps& taps, int64_t c,
                                                uint8_t* HWY_RESTRICT out, int64_t count) {
  using V = typename T::V;
  constexpr int64_t kLanes = T::kChannels / 4;
  auto load = [&](int i, int64_t t) {
    const V v = T::Load(taps.At(i, t) + c);
    return kSignedX ? T::Flip(v) : v;
  };
  V acc[kPix][4], xsum[kPix][4];
#pragma GCC unroll 4
  for (int k = 0; k < 4; ++k) {
    acc[0][k] = T::Load(p.bias + c + kLanes * k);
    if (kPix > 1) acc[kPix - 1][k] = acc[0][k];
    if (kOffsets) {
      xsum[0][k] = T::Zero();
      if (kPix > 1) xsum[kPix - 1][k] = xsum[0][k];
    }
  }
  const int8_t* HWY_RESTRICT w = p.w4 + c * p.groups * 4;
  int64_t t = 0;
  for (; t + 4 <= p.taps; t += 4, w += 4 * T::kChannels) {
#pragma GCC unroll 2
    for (int i = 0; i < kPix; ++i) {
      VnniGroup<T, kOffsets>(load(i, t), load(i, t + 1), load(i, t + 2), load(i, t + 3), w, acc[i], xsum[i]);
    }
  }
  // The last 1 to 3 taps, the rest zeros (their weights are zero too).
  const int64_t left = p.taps - t;
  if (left > 0) {
    const V z = T::Zero();
#pragma GCC unroll 2
    for (int i = 0; i < kPix; ++i) {
      VnniGroup<T, kOffsets>(load(i, t), left > 1 ? load(i, t + 1) : z, left > 2 ? load(i, t + 2) : z, z, w, acc[i],
                             xsum[i]);
    }
  }
  const float* m = p.multiplier + c;
#pragma GCC unroll 2
  for (int i = 0; i < kPix; ++i) {
    if (kOffsets) {
#pragma GCC unroll 4
      for (int k = 0; k < 4; ++k) acc[i][k] = T::AddMul(acc[i][k], xsum[i][k], p.offsets + c + kLanes * k);
    }
    const V lo = T::AddZero(T::Pack32(T::Scale(acc[i][0], m), T::Scale(acc[i][1], m + kLanes)), p.y_zero);
    const V hi =
        T::AddZero(T::Pack32(T::Scale(acc[i][2], m + 2 * kLanes), T::Scale(acc[i][3], m + 3 * kLanes)), p.y_zero);
    // Saturating to int16 and then to 8 bits is saturating to 8 bits.
    T::Store(out + i * p.channels, T::Pack16(lo, hi, kSignedY), count);
  }
}

// Units of 64 channels in zmm, a last one of 32 in ymm (QDepthwiseVnniUnit), two pixels at a time:
// one pixel's four chains of vpdpbusd and its requantization are one long dependency, and with
// them alone the loop waited on it (112x112x32: 126 -> 102 us; removing every unpack, results
// aside, saved only 5-20%). Against the 16-bit path (quant_depthwise_benchmark, 1 thread, least
// CPU time of 5 rounds alternated on a loaded Zen 4): 112x112x32 233 -> 98 us, 56x56x144 216 ->
// 106 us, 112x112x96 stride 2 159 -> 73 us, 28x28x136 53 -> 30 us. Sharing each input column's
// interleaved bytes between the 3 pixels whose windows cover it (a scratch row per output row)
// was slower: 56x56x144 155 us, stride 2 about 1.6x this.
template <bool kSignedX, bool kSignedY, bool kOffsets>
ONNXFLOW_QDW_VNNI_ATTR HWY_NOINLINE void VnniPixels(const QDepthwiseRow& p, QDepthwiseTaps taps, int64_t pixels,
                                                    uint8_t* HWY_RESTRICT y) {
  const int64_t wide_end = std::min(p.cp / 64 * 64, p.channels);
  int64_t i = 0;
  for (; i + 2 <= pixels; i += 2, taps = taps.Skip(2), y += 2 * p.channels) {
    int64_t c = 0;
    for (; c < wide_end; c += 64) VnniUnit<VnniZmm, 2, kSignedX, kSignedY, kOffsets>(p, taps, c, y + c, p.channels - c);
    if (c < p.channels) VnniUnit<VnniYmm, 2, kSignedX, kSignedY, kOffsets>(p, taps, c, y + c, p.channels - c);
  }
  if (i < pixels) {
    int64_t c = 0;
    for (; c < wide_end; c += 64) VnniUnit<VnniZmm, 1, kSignedX, kSignedY, kOffsets>(p, taps, c, y + c, p.channels - c);
    if (c < p.channels) VnniUnit<VnniYmm, 1, kSignedX, kSignedY, kOffsets>(p, taps, c, y + c, p.channels - c);
  }
}

template <bool kSignedX, bool kSignedY>
ONNXFLOW_QDW_VNNI_ATTR void VnniPixelsOf(const QDepthwiseRow& p, const QDepthwiseTaps& taps, int64_t pixels,
                                         uint8_t* y) {
  if (p.offsets != nullptr) return VnniPixels<kSignedX, kSignedY, true>(p, taps, pixels, y);
  VnniPixels<kSignedX, kSignedY, false>(p, taps, pixels, y);
}
#endif  // HWY_AVX3

// `pixels` output pixels: pixel i's tap t at taps.At(i, t) (readable for p.cp bytes), its channels
// stored at y + i * p.channels.
void QDepthwisePixelsImpl(const QDepthwiseRow& p, const QDepthwiseTaps& taps, int64_t pixels, uint8_t* HWY_RESTRICT y) {
#if HWY_TARGET == HWY_AVX3
  // The driver sets w4 only when this target is the one dispatched and the CPU has VNNI.
  if (p.w4 != nullptr) {
    if (p.x_signed) {
      return p.y_signed ? VnniPixelsOf<true, true>(p, taps, pixels, y) : VnniPixelsOf<true, false>(p, taps, pixels, y);
    }
    return p.y_signed ? VnniPixelsOf<false, true>(p, taps, pixels, y) : VnniPixelsOf<false, false>(p, taps, pixels, y);
  }
#endif
  if (p.x_signed) {
    return p.y_signed ? Pixels<true, true>(p, taps, pixels, y) : Pixels<true, false>(p, taps, pixels, y);
  }
  return p.y_signed ? Pixels<false, true>(p, taps, pixels, y) : Pixels<false, false>(p, taps, pixels, y);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_MATH_QUANT_DEPTHWISE_INL_H_
