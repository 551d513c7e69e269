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
// taps[i * p.taps], its output at out + i * p.channels): kPix * kVecs independent sums (one chain
// of vpmaddwd + vpaddd waits on its latency), each tap's weights read once for all of them.
template <bool kSignedX, bool kSignedY, int kPix, int kVecs>
HWY_INLINE void PixelChannels(const QDepthwiseRow& p, const uint8_t* const* HWY_RESTRICT taps, int64_t c,
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
        const uint8_t* x = taps[i * p.taps + t] + c;
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
HWY_INLINE void Pixels(const QDepthwiseRow& p, const uint8_t* const* HWY_RESTRICT taps, int64_t pixels,
                       uint8_t* HWY_RESTRICT y) {
  const QDwTag d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  if (p.channels < 4 * lanes) {
    for (; i + 2 <= pixels; i += 2, taps += 2 * p.taps, y += 2 * p.channels) {
      int64_t c = 0;
      for (; c + 2 * lanes <= p.channels; c += 2 * lanes) PixelChannels<kSignedX, kSignedY, 2, 2>(p, taps, c, y + c, lanes);
      for (; c < p.channels; c += lanes) {
        PixelChannels<kSignedX, kSignedY, 2, 1>(p, taps, c, y + c, std::min(lanes, p.channels - c));
      }
    }
  }
  for (; i < pixels; ++i, taps += p.taps, y += p.channels) {
    int64_t c = 0;
    for (; c + 4 * lanes <= p.channels; c += 4 * lanes) PixelChannels<kSignedX, kSignedY, 1, 4>(p, taps, c, y + c, lanes);
    for (; c < p.channels; c += lanes) {
      PixelChannels<kSignedX, kSignedY, 1, 1>(p, taps, c, y + c, std::min(lanes, p.channels - c));
    }
  }
}

// `pixels` output pixels: pixel i's taps at taps[i * p.taps ...] (each readable for p.cp bytes),
// its channels stored at y + i * p.channels.
void QDepthwisePixelsImpl(const QDepthwiseRow& p, const uint8_t* const* HWY_RESTRICT taps, int64_t pixels,
                          uint8_t* HWY_RESTRICT y) {
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
