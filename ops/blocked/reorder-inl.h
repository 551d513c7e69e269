// SIMD part of the blocked reorders (reorder.cc): channel planes <-> pixel-major rows of channels,
// 16 pixels at a time. On AVX-512 a whole 16 x 16 tile (a full block of 16 channels and 16
// pixels) is transposed in registers; partial tiles, other channel counts (a stem's 3 channels)
// and the other targets move element by element within the tile, which stays in L1 either way.
// Compiled once per CPU target through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"
#include "ops/blocked/blocked_layout.h"

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr bool kTransposesTiles = true;

// dst row i = column i of the 16 x 16 tile whose rows start src_stride floats apart. Highway 1.0.3
// has no shuffle of 128-bit blocks across two vectors, hence the intrinsics: pairs of rows
// interleaved by 32 and then 64 bits leave 4 x 4 transposed pieces in each 128-bit block, and two
// rounds of block shuffles put the pieces of a column together.
inline void Transpose16x16(const float* src, int64_t src_stride, float* dst, int64_t dst_stride) {
  __m512 r[16], t[16];
  for (int i = 0; i < 16; ++i) r[i] = _mm512_loadu_ps(src + i * src_stride);
  for (int i = 0; i < 8; ++i) {
    t[2 * i] = _mm512_unpacklo_ps(r[2 * i], r[2 * i + 1]);
    t[2 * i + 1] = _mm512_unpackhi_ps(r[2 * i], r[2 * i + 1]);
  }
  // s[4i + c], 128-bit block k: column 4k + c of rows 4i .. 4i + 3.
  __m512 s[16];
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 2; ++j) {
      const __m512d a = _mm512_castps_pd(t[4 * i + j]), b = _mm512_castps_pd(t[4 * i + j + 2]);
      s[4 * i + 2 * j] = _mm512_castpd_ps(_mm512_unpacklo_pd(a, b));      // column 4k + 2j
      s[4 * i + 2 * j + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(a, b));  // column 4k + 2j + 1
    }
  }
  // Column 4k + c: block k of s[c], s[4 + c], s[8 + c], s[12 + c].
  for (int c = 0; c < 4; ++c) {
    const __m512 u0 = _mm512_shuffle_f32x4(s[c], s[4 + c], 0x44);       // A0 A1 B0 B1
    const __m512 u1 = _mm512_shuffle_f32x4(s[c], s[4 + c], 0xEE);       // A2 A3 B2 B3
    const __m512 u2 = _mm512_shuffle_f32x4(s[8 + c], s[12 + c], 0x44);  // C0 C1 D0 D1
    const __m512 u3 = _mm512_shuffle_f32x4(s[8 + c], s[12 + c], 0xEE);  // C2 C3 D2 D3
    _mm512_storeu_ps(dst + (0 + c) * dst_stride, _mm512_shuffle_f32x4(u0, u2, 0x88));
    _mm512_storeu_ps(dst + (4 + c) * dst_stride, _mm512_shuffle_f32x4(u0, u2, 0xDD));
    _mm512_storeu_ps(dst + (8 + c) * dst_stride, _mm512_shuffle_f32x4(u1, u3, 0x88));
    _mm512_storeu_ps(dst + (12 + c) * dst_stride, _mm512_shuffle_f32x4(u1, u3, 0xDD));
  }
}
#else
constexpr bool kTransposesTiles = false;
inline void Transpose16x16(const float*, int64_t, float*, int64_t) {}
#endif

// A stem's image, 3 (or 4) planes -> pixels of 3 (4) floats: a vector of pixels from each plane,
// stored interleaved; the pixels past the last whole vector, one by one.
void InterleaveFewChannels(const float* HWY_RESTRICT planes, int64_t plane_stride, int64_t channels, int64_t pixels,
                           float* HWY_RESTRICT interleaved) {
  const hn::ScalableTag<float> d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  int64_t p = 0;
  for (; p + n <= pixels; p += n) {
    const auto v0 = hn::LoadU(d, planes + p);
    const auto v1 = hn::LoadU(d, planes + plane_stride + p);
    const auto v2 = hn::LoadU(d, planes + 2 * plane_stride + p);
    if (channels == 3) {
      hn::StoreInterleaved3(v0, v1, v2, d, interleaved + p * 3);
    } else {
      const auto v3 = hn::LoadU(d, planes + 3 * plane_stride + p);
      hn::StoreInterleaved4(v0, v1, v2, v3, d, interleaved + p * 4);
    }
  }
  for (; p < pixels; ++p) {
    for (int64_t c = 0; c < channels; ++c) interleaved[p * channels + c] = planes[c * plane_stride + p];
  }
}

// Planes of `channels` x `pixels` floats, `plane_stride` apart -> rows of `lanes` floats per
// pixel (zero past `channels`). Stems' 3 or 4 channels with no pad lanes: InterleaveFewChannels
// (a 240 x 320 RGB image 16% of its stem convolution's time element by element).
void InterleaveChannelsImpl(const float* HWY_RESTRICT planes, int64_t plane_stride, int64_t channels, int64_t pixels,
                            int64_t lanes, float* HWY_RESTRICT interleaved) {
  if (lanes == channels && (channels == 3 || channels == 4)) {
    InterleaveFewChannels(planes, plane_stride, channels, pixels, interleaved);
    return;
  }
  for (int64_t p0 = 0; p0 < pixels; p0 += kChannelBlock) {
    const int64_t count = std::min(kChannelBlock, pixels - p0);
    if (kTransposesTiles && count == kChannelBlock && channels == kChannelBlock && lanes == kChannelBlock) {
      Transpose16x16(planes + p0, plane_stride, interleaved + p0 * lanes, lanes);
      continue;
    }
    for (int64_t c = 0; c < lanes; ++c) {
      float* dst = interleaved + p0 * lanes + c;
      if (c >= channels) {
        for (int64_t i = 0; i < count; ++i) dst[i * lanes] = 0.0f;
        continue;
      }
      const float* src = planes + c * plane_stride + p0;
      for (int64_t i = 0; i < count; ++i) dst[i * lanes] = src[i];
    }
  }
}

// Rows of 16 floats per pixel (a block) -> the first `channels` of them as planes `plane_stride` apart.
void DeinterleaveImpl(const float* HWY_RESTRICT blocked, int64_t pixels, int64_t plane_stride, int64_t channels,
                      float* HWY_RESTRICT planes) {
  for (int64_t p0 = 0; p0 < pixels; p0 += kChannelBlock) {
    const int64_t count = std::min(kChannelBlock, pixels - p0);
    if (kTransposesTiles && count == kChannelBlock && channels == kChannelBlock) {
      Transpose16x16(blocked + p0 * kChannelBlock, kChannelBlock, planes + p0, plane_stride);
      continue;
    }
    for (int64_t c = 0; c < channels; ++c) {
      const float* src = blocked + p0 * kChannelBlock + c;
      float* dst = planes + c * plane_stride + p0;
      for (int64_t i = 0; i < count; ++i) dst[i] = src[i * kChannelBlock];
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_
