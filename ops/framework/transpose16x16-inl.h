// A 16 x 16 tile of 4-byte elements transposed in AVX-512 registers: the blocked reorders
// (ops/blocked/reorder-inl.h) and Transpose of 4-byte elements (ops/tensor/transpose_words-inl.h).
// Other targets say kTransposesTiles = false and move their tiles element by element.
// Included once per CPU target through hwy/foreach_target.h, like any *-inl.h.

#if defined(ONNXFLOW_OPS_FRAMEWORK_TRANSPOSE16X16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_FRAMEWORK_TRANSPOSE16X16_INL_H_
#undef ONNXFLOW_OPS_FRAMEWORK_TRANSPOSE16X16_INL_H_
#else
#define ONNXFLOW_OPS_FRAMEWORK_TRANSPOSE16X16_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr bool kTransposesTiles = true;

// dst row i = column i of the 16 x 16 tile whose rows start src_stride floats apart. Highway 1.0.3
// has no shuffle of 128-bit blocks across two vectors, hence the intrinsics: pairs of rows
// interleaved by 32 and then 64 bits leave 4 x 4 transposed pieces in each 128-bit block, and two
// rounds of block shuffles put the pieces of a column together. Any 4-byte type passes as float:
// the lanes are only moved.
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

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
