// SIMD part of the integer GEMM (qgemm.h): B packing, the micro-kernels and the epilogues.
// Compiled once per CPU target through hwy/foreach_target.h (see qgemm.cc). Highway 1.0.3 has no
// 8-bit dot product, so the micro-kernels are intrinsics inside the x86 targets' code; the
// epilogues and the packing are Highway.

#if defined(ONNXFLOW_OPS_MATH_QGEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_MATH_QGEMM_INL_H_
#undef ONNXFLOW_OPS_MATH_QGEMM_INL_H_
#else
#define ONNXFLOW_OPS_MATH_QGEMM_INL_H_
#endif

#include <algorithm>
#include <cstring>

#include "hwy/highway.h"
#include "ops/math/qgemm.h"
#include "ops/math/qgemm_amx.h"

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2
#include <immintrin.h>
#endif

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace qgemm_detail {

// Tile rows per kernel: VNNI 8 x 3 zmm (24 accumulators); AVX-512BW 6 x 3 (its split halves need
// 8 more registers); AVX2 4 rows x 2 ymm per pass (16 registers); the plain loop any.
constexpr int64_t kMaxRows = 8;

inline int32_t Load4(const uint8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

#if HWY_TARGET == HWY_AVX3
// vpdpbusd needs the avx512vnni target; Highway's AVX3 target does not include it (AVX3_DL, which
// does, is not built here), so this kernel has its own attribute and runs only when the CPU has
// VNNI (checked at run time by the driver).
#define ONNXFLOW_QGEMM_VNNI_ATTR                                                                      \
  __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512vnni,avx2,fma,bmi,bmi2,f16c,popcnt," \
                        "lzcnt,sse4.2")))

// The VNNI micro-kernel: kRows rows of A times kVecs vectors of 16 columns, each vector at its
// own place in B (a run of 64 columns crosses from one 48-column strip into the next: 64 = 48 +
// 16), into an int32 tile of row stride ldo. Four vectors by 6 rows use 24 accumulators with 4
// loads of B and 6 broadcasts per k-quad; a layer of 64 output channels then runs whole
// 64-column tiles instead of a 48-column strip and a 16-column one that loads A once per vector.
constexpr int64_t kWideCols = 64;
// kAccumulate adds the products to what `out` holds (the K past AMX's last 64-byte chunk).
template <int kRows, int kVecs, bool kAccumulate = false>
ONNXFLOW_QGEMM_VNNI_ATTR HWY_NOINLINE void TileVnniCols(const uint8_t* HWY_RESTRICT a, int64_t lda,
                                                        const int8_t* const* bp, int64_t quads,
                                                        int32_t* HWY_RESTRICT out, int64_t ldo) {
  __m512i acc[kRows][kVecs];
  const int8_t* b[kVecs];
#pragma GCC unroll 4
  for (int v = 0; v < kVecs; ++v) b[v] = bp[v];
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      acc[r][v] = kAccumulate ? _mm512_load_si512(out + r * ldo + 16 * v) : _mm512_setzero_si512();
    }
  }
  for (int64_t q = 0; q < quads; ++q) {
    __m512i bv[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) bv[v] = _mm512_load_si512(b[v] + q * (kQNr * 4));
#pragma GCC unroll 8
    for (int r = 0; r < kRows; ++r) {
      const __m512i av = _mm512_set1_epi32(Load4(a + r * lda + q * 4));
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) acc[r][v] = _mm512_dpbusd_epi32(acc[r][v], av, bv[v]);
    }
  }
#pragma GCC unroll 8
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) _mm512_store_si512(out + r * ldo + 16 * v, acc[r][v]);
  }
}

// kVecs of the strip's 3 vectors of 16 columns: a last strip of a few columns (a 7x7 map's 49
// output pixels are 48 + 1) computes only the vectors it has. (3 for the 1-column strip made the
// 7x7 layers of a QDQ ResNet-50 do half their work for nothing.)
template <int kRows, int kVecs>
ONNXFLOW_QGEMM_VNNI_ATTR void TileVnni(const uint8_t* a, int64_t lda, const int8_t* b, int64_t quads, int32_t* out) {
  const int8_t* bp[3] = {b, b + 64, b + 128};
  TileVnniCols<kRows, kVecs>(a, lda, bp, quads, out, kQNr);
}

// Stores the first `left` (up to 16) of saturate(round_half_even(float(x) * scale) + zero) as
// 8-bit values. The product is clamped to +-65536 first, past any 8-bit result, so that
// vcvtps2dq stays in range.
ONNXFLOW_QGEMM_VNNI_ATTR inline void StoreRequantized(__m512i x, __m512 scale, __m512i zero, bool u8, uint8_t* dst,
                                                      int64_t left) {
  const __m512 limit = _mm512_set1_ps(65536.0f);
  __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(x), scale);
  f = _mm512_min_ps(_mm512_max_ps(f, _mm512_sub_ps(_mm512_setzero_ps(), limit)), limit);
  const __m512i q = _mm512_add_epi32(_mm512_cvtps_epi32(f), zero);
  const __m128i bytes = u8 ? _mm512_cvtusepi32_epi8(_mm512_max_epi32(q, _mm512_setzero_si512())) : _mm512_cvtsepi32_epi8(q);
  if (left >= 16) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst), bytes);
  } else if (left > 0) {
    _mm_mask_storeu_epi8(dst, static_cast<__mmask16>((1u << left) - 1), bytes);
  }
}

// StoreRequantized on 64 values (4 vectors of 16 consecutive columns) at once, with the same
// results: the products clamped only at +65536 (below -2^31 vcvtps2dq answers -2^31, and a NaN
// stays NaN through min(65536, f) to answer the same), narrowed to int16 with saturation, the zero
// point added with saturation, narrowed to 8 bits, and the 16 dwords put back in column order
// (packs work within 128-bit lanes: dword 4L + v holds columns 16v + 4L..+3). Per 64 columns 26
// instructions in place of 40: on MobileNetV2's 1x1 layers (K of 16 to 32: 4 to 8 vpdpbusd per
// row and vector) the epilogue outweighed the products.
ONNXFLOW_QGEMM_VNNI_ATTR inline void StoreRequantized64(const __m512i* x, const __m512* scale, int32_t zero, bool u8,
                                                        uint8_t* dst) {
  const __m512 limit = _mm512_set1_ps(65536.0f);
  __m512i q[4];
#pragma GCC unroll 4
  for (int v = 0; v < 4; ++v) q[v] = _mm512_cvtps_epi32(_mm512_min_ps(limit, _mm512_mul_ps(_mm512_cvtepi32_ps(x[v]), scale[v])));
  const __m512i z = _mm512_set1_epi16(static_cast<int16_t>(zero));
  const __m512i lo = _mm512_adds_epi16(_mm512_packs_epi32(q[0], q[1]), z);
  const __m512i hi = _mm512_adds_epi16(_mm512_packs_epi32(q[2], q[3]), z);
  const __m512i bytes = u8 ? _mm512_packus_epi16(lo, hi) : _mm512_packs_epi16(lo, hi);
  const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
  _mm512_storeu_si512(dst, _mm512_permutexvar_epi32(order, bytes));
}

// The requantizing epilogue in AVX-512 on an int32 tile of `rows` x `cols` (<= 16 * kVecs; row r
// at tile + r * ldt), 8-bit results stored straight to C: for small K (a 1x1 convolution over 64
// channels is 16 quads) the generic Epilogue costs as much as the products. Same float operations
// as Epilogue (and the reference): float(v) * (scale_row * scale_col [/ out_scale]), rounded half
// to even (the MXCSR default of vcvtps2dq), plus the zero point, saturated.
template <int kVecs>
ONNXFLOW_QGEMM_VNNI_ATTR HWY_NOINLINE void RequantizeTile(const int32_t* HWY_RESTRICT tile, int64_t ldt, int64_t rows,
                                                          const qgemm_internal::QBlock& blk, int64_t row0,
                                                          int64_t col0, int64_t cols) {
  const bool u8 = blk.kind == QOutput::kUint8;
  const __m512i zero_point = _mm512_set1_epi32(blk.out_zero);
  const int64_t c0 = col0;
  uint8_t* const c = static_cast<uint8_t*>(blk.c);
  const int64_t ldc = blk.ldc;
  if (blk.unit_za && blk.scale_row == nullptr) {
    // One zero point for A, scales per column (a convolution): the column terms, B's zero points
    // and multipliers load once per tile, not once per row. B's zero points are 0 unless B was
    // uint8 with a zero point other than 128 (the zoo's u8u8 models, per tensor): those took the
    // general loop below, with a division per vector and row, 2-3x slower on MobileNetV2's 1x1
    // layers (profile: 112x112 16->96 0.32..0.43 ms against 0.14 with int8 weights).
    __m512i add[kVecs], zb[kVecs];
    __m512 scale[kVecs];
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      add[v] = _mm512_loadu_si512(blk.b_term + c0 + 16 * v);
      zb[v] = blk.zb_zero ? _mm512_setzero_si512() : _mm512_loadu_si512(blk.zb + c0 + 16 * v);
      scale[v] = blk.scale_col != nullptr ? _mm512_loadu_ps(blk.scale_col + c0 + 16 * v) : _mm512_set1_ps(1.0f);
      if (blk.out_scale != 1.0f) scale[v] = _mm512_div_ps(scale[v], _mm512_set1_ps(blk.out_scale));
    }
    // (Its zero point is added as an int16: an 8-bit output's, -128..255, always is.)
    if (kVecs == 4 && cols == kWideCols && blk.out_zero >= -255 && blk.out_zero <= 255) {
      for (int64_t r = 0; r < rows; ++r) {
        const __m512i nrs = _mm512_set1_epi32(blk.zb_zero ? 0 : blk.neg_row_sum[row0 + r]);
        __m512i x[4];
#pragma GCC unroll 4
        for (int v = 0; v < 4; ++v) {
          x[v] = _mm512_add_epi32(_mm512_load_si512(tile + r * ldt + 16 * v), add[v]);
          if (!blk.zb_zero) x[v] = _mm512_add_epi32(x[v], _mm512_mullo_epi32(nrs, zb[v]));
        }
        StoreRequantized64(x, scale, blk.out_zero, u8, c + (row0 + r) * ldc + c0);
      }
      return;
    }
    for (int64_t r = 0; r < rows; ++r) {
      uint8_t* dst = c + (row0 + r) * ldc + c0;
      const __m512i nrs = _mm512_set1_epi32(blk.zb_zero ? 0 : blk.neg_row_sum[row0 + r]);
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) {
        __m512i x = _mm512_add_epi32(_mm512_load_si512(tile + r * ldt + 16 * v), add[v]);
        if (!blk.zb_zero) x = _mm512_add_epi32(x, _mm512_mullo_epi32(nrs, zb[v]));
        StoreRequantized(x, scale[v], zero_point, u8, dst + 16 * v, cols - 16 * v);
      }
    }
    return;
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = row0 + r;
    const float sr = blk.scale_row != nullptr ? blk.scale_row[i] : 1.0f;
    uint8_t* dst = c + i * ldc + c0;
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      const int64_t j = c0 + 16 * v;
      __m512i x = _mm512_load_si512(tile + r * ldt + 16 * v);
      const __m512i bt = _mm512_loadu_si512(blk.b_term + j);
      if (blk.unit_za) {
        x = _mm512_add_epi32(x, bt);
      } else {
        x = _mm512_add_epi32(x, _mm512_mullo_epi32(_mm512_set1_epi32(blk.neg_za[i]), bt));
        if (blk.bias_row != nullptr) x = _mm512_add_epi32(x, _mm512_set1_epi32(blk.bias_row[i]));
        if (blk.bias_col != nullptr) x = _mm512_add_epi32(x, _mm512_loadu_si512(blk.bias_col + j));
      }
      if (!blk.zb_zero) {
        x = _mm512_add_epi32(x, _mm512_mullo_epi32(_mm512_set1_epi32(blk.neg_row_sum[i]),
                                                   _mm512_loadu_si512(blk.zb + j)));
      }
      __m512 s = _mm512_set1_ps(sr);
      if (blk.scale_col != nullptr) s = _mm512_mul_ps(s, _mm512_loadu_ps(blk.scale_col + j));
      if (blk.out_scale != 1.0f) s = _mm512_div_ps(s, _mm512_set1_ps(blk.out_scale));
      StoreRequantized(x, s, zero_point, u8, dst + 16 * v, cols - 16 * v);
    }
  }
}

// TileVnniCols and RequantizeTile: the products in their own function's registers, through an
// int32 tile in L1 (with the epilogue's constants live in the same function the compiler spilled
// accumulators in the K loop).
template <int kRows, int kVecs>
ONNXFLOW_QGEMM_VNNI_ATTR HWY_NOINLINE void TileVnniRequant(const uint8_t* HWY_RESTRICT a, int64_t lda,
                                                           const int8_t* const* bp, int64_t quads,
                                                           const qgemm_internal::QBlock& blk, int64_t row0,
                                                           int64_t col0, int64_t cols) {
  HWY_ALIGN int32_t tile[kMaxRows * kWideCols];
  TileVnniCols<kRows, kVecs>(a, lda, bp, quads, tile, kWideCols);
  RequantizeTile<kVecs>(tile, kWideCols, kRows, blk, row0, col0, cols);
}

// The int32 and float epilogues on a tile as RequantizeTile takes it: Epilogue's operations in the
// same order on whole vectors, the per-column terms loaded once per tile instead of once per row.
template <int kVecs>
ONNXFLOW_QGEMM_VNNI_ATTR HWY_NOINLINE void FinishTile(const int32_t* HWY_RESTRICT tile, int64_t ldt, int64_t rows,
                                                      const qgemm_internal::QBlock& blk, int64_t row0, int64_t col0,
                                                      int64_t cols) {
  __m512i zb[kVecs], bt[kVecs], bc[kVecs];
  __m512 sc[kVecs], fb[kVecs];
  __mmask16 mask[kVecs];
#pragma GCC unroll 4
  for (int v = 0; v < kVecs; ++v) {
    const int64_t j = col0 + 16 * v, left = cols - 16 * v;
    zb[v] = blk.zb_zero ? _mm512_setzero_si512() : _mm512_loadu_si512(blk.zb + j);
    bt[v] = _mm512_loadu_si512(blk.b_term + j);
    bc[v] = blk.bias_col != nullptr ? _mm512_loadu_si512(blk.bias_col + j) : _mm512_setzero_si512();
    sc[v] = blk.scale_col != nullptr ? _mm512_loadu_ps(blk.scale_col + j) : _mm512_set1_ps(1.0f);
    fb[v] = blk.fbias_col != nullptr ? _mm512_loadu_ps(blk.fbias_col + j) : _mm512_setzero_ps();
    mask[v] = left >= 16 ? static_cast<__mmask16>(0xFFFF) : static_cast<__mmask16>((1u << left) - 1);
  }
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = row0 + r;
    const __m512i nrs = _mm512_set1_epi32(blk.neg_row_sum[i]);
    const __m512i nza = _mm512_set1_epi32(blk.neg_za[i]);
    const __m512i br = _mm512_set1_epi32(blk.bias_row != nullptr ? blk.bias_row[i] : 0);
    const __m512 sr = _mm512_set1_ps(blk.scale_row != nullptr ? blk.scale_row[i] : 1.0f);
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      __m512i x = _mm512_load_si512(tile + r * ldt + 16 * v);
      if (!blk.zb_zero) x = _mm512_add_epi32(x, _mm512_mullo_epi32(nrs, zb[v]));
      x = _mm512_add_epi32(_mm512_add_epi32(x, _mm512_mullo_epi32(nza, bt[v])), br);
      if (blk.bias_col != nullptr) x = _mm512_add_epi32(x, bc[v]);
      const int64_t at = i * blk.ldc + col0 + 16 * v;
      if (blk.kind == QOutput::kInt32) {
        _mm512_mask_storeu_epi32(static_cast<int32_t*>(blk.c) + at, mask[v], x);
        continue;
      }
      __m512 s = sr;
      if (blk.scale_col != nullptr) s = _mm512_mul_ps(s, sc[v]);
      __m512 f = _mm512_mul_ps(_mm512_cvtepi32_ps(x), s);
      if (blk.fbias_col != nullptr) f = _mm512_add_ps(f, fb[v]);
      _mm512_mask_storeu_ps(static_cast<float*>(blk.c) + at, mask[v], f);
    }
  }
}

template <int kVecs>
ONNXFLOW_QGEMM_VNNI_ATTR void TileVnniRequantRows(const uint8_t* a, int64_t lda, const int8_t* const* bp,
                                                  int64_t quads, int64_t rows, const qgemm_internal::QBlock& blk,
                                                  int64_t row0, int64_t col0, int64_t cols) {
  switch (rows) {
    case 1: return TileVnniRequant<1, kVecs>(a, lda, bp, quads, blk, row0, col0, cols);
    case 2: return TileVnniRequant<2, kVecs>(a, lda, bp, quads, blk, row0, col0, cols);
    case 3: return TileVnniRequant<3, kVecs>(a, lda, bp, quads, blk, row0, col0, cols);
    case 4: return TileVnniRequant<4, kVecs>(a, lda, bp, quads, blk, row0, col0, cols);
    case 5: return TileVnniRequant<5, kVecs>(a, lda, bp, quads, blk, row0, col0, cols);
    case 6: return TileVnniRequant<6, kVecs>(a, lda, bp, quads, blk, row0, col0, cols);
    case 7: return TileVnniRequant<7, kVecs>(a, lda, bp, quads, blk, row0, col0, cols);
    default: return TileVnniRequant<8, kVecs>(a, lda, bp, quads, blk, row0, col0, cols);
  }
}

// TileVnniRequant on rows read as windows (QRowSource::Windows): each segment's products added
// into the tile, B's quads of that segment at their place in the strips.
template <int kRows, int kVecs>
ONNXFLOW_QGEMM_VNNI_ATTR HWY_NOINLINE void TileVnniWindowsRequant(const QWindows& w, const int8_t* const* bp,
                                                                  const qgemm_internal::QBlock& blk, int64_t row0,
                                                                  int64_t col0, int64_t cols) {
  HWY_ALIGN int32_t tile[kMaxRows * kWideCols];
  const int64_t quads = w.seg_k / 4;
  for (int64_t s = 0; s < w.segments; ++s) {
    const int8_t* b[kVecs];
    for (int v = 0; v < kVecs; ++v) b[v] = bp[v] + s * quads * (kQNr * 4);
    if (s == 0) {
      TileVnniCols<kRows, kVecs>(w.base[s], w.stride, b, quads, tile, kWideCols);
    } else {
      TileVnniCols<kRows, kVecs, true>(w.base[s], w.stride, b, quads, tile, kWideCols);
    }
  }
  RequantizeTile<kVecs>(tile, kWideCols, kRows, blk, row0, col0, cols);
}

template <int kVecs>
ONNXFLOW_QGEMM_VNNI_ATTR void TileVnniWindowsRows(const QWindows& w, const int8_t* const* bp, int64_t rows,
                                                  const qgemm_internal::QBlock& blk, int64_t row0, int64_t col0,
                                                  int64_t cols) {
  switch (rows) {
    case 1: return TileVnniWindowsRequant<1, kVecs>(w, bp, blk, row0, col0, cols);
    case 2: return TileVnniWindowsRequant<2, kVecs>(w, bp, blk, row0, col0, cols);
    case 3: return TileVnniWindowsRequant<3, kVecs>(w, bp, blk, row0, col0, cols);
    case 4: return TileVnniWindowsRequant<4, kVecs>(w, bp, blk, row0, col0, cols);
    case 5: return TileVnniWindowsRequant<5, kVecs>(w, bp, blk, row0, col0, cols);
    case 6: return TileVnniWindowsRequant<6, kVecs>(w, bp, blk, row0, col0, cols);
    case 7: return TileVnniWindowsRequant<7, kVecs>(w, bp, blk, row0, col0, cols);
    default: return TileVnniWindowsRequant<8, kVecs>(w, bp, blk, row0, col0, cols);
  }
}

// The 16-column vector of B that starts at column `col` (a multiple of 16) of the block: its strip,
// then its 64 bytes within each k-quad of the strip.
inline const int8_t* VectorOfB(const qgemm_internal::QBlock& blk, int64_t col) {
  return blk.b + (col / kQNr) * blk.strip_bytes + (col % kQNr) / 16 * 64;
}

// The requantizing VNNI path of a block: runs of 64 columns (4 vectors, 6 rows per tile; the last
// run may have fewer vectors, 8 rows per tile), each vector read from its strip of B.
ONNXFLOW_QGEMM_VNNI_ATTR inline void RunRequantVnni(const qgemm_internal::QBlock& blk, int64_t lda, int64_t quads) {
  for (int64_t j0 = 0; j0 < blk.n; j0 += kWideCols) {
    const int64_t cols = std::min(kWideCols, blk.n - j0);
    const int64_t vecs = (cols + 15) / 16;
    const int8_t* bp[4];
    for (int64_t v = 0; v < vecs; ++v) {
      const int64_t col = j0 + 16 * v;
      bp[v] = VectorOfB(blk, col);
    }
    const int64_t mr = vecs == 4 ? 6 : 8;
    for (int64_t i0 = 0, rows = 0; i0 < blk.m; i0 += rows) {
      rows = std::min(mr, blk.m - i0);
      const uint8_t* a = blk.a + i0 * lda;
      int64_t tile_lda = lda;
      if (blk.source != nullptr) {
        // A whole tile of windows where its rows have them; else the tile's rows gathered (a
        // border pixel's window leaves the image; a tile crosses an output row). Cutting tiles at
        // the borders instead left 1- and 2-row tiles, which load B for few rows: a QDQ
        // ResNet-50 ran 3-5% slower.
        QWindows w;
        if (blk.source->Windows(blk.source_row0 + i0, rows, &w) == rows) {
          switch (vecs) {
            case 1: TileVnniWindowsRows<1>(w, bp, rows, blk, i0, j0, cols); break;
            case 2: TileVnniWindowsRows<2>(w, bp, rows, blk, i0, j0, cols); break;
            case 3: TileVnniWindowsRows<3>(w, bp, rows, blk, i0, j0, cols); break;
            default: TileVnniWindowsRows<4>(w, bp, rows, blk, i0, j0, cols); break;
          }
          continue;
        }
        tile_lda = blk.kp;
        a = blk.source->Rows(blk.source_row0 + i0, rows, blk.scratch, &tile_lda);
      }
      switch (vecs) {
        case 1: TileVnniRequantRows<1>(a, tile_lda, bp, quads, rows, blk, i0, j0, cols); break;
        case 2: TileVnniRequantRows<2>(a, tile_lda, bp, quads, rows, blk, i0, j0, cols); break;
        case 3: TileVnniRequantRows<3>(a, tile_lda, bp, quads, rows, blk, i0, j0, cols); break;
        default: TileVnniRequantRows<4>(a, tile_lda, bp, quads, rows, blk, i0, j0, cols); break;
      }
    }
  }
}

template <int kVecs>
ONNXFLOW_QGEMM_VNNI_ATTR void TileVnniRows(const uint8_t* a, int64_t lda, const int8_t* b, int64_t quads,
                                           int64_t rows, int32_t* out) {
  switch (rows) {
    case 1: return TileVnni<1, kVecs>(a, lda, b, quads, out);
    case 2: return TileVnni<2, kVecs>(a, lda, b, quads, out);
    case 3: return TileVnni<3, kVecs>(a, lda, b, quads, out);
    case 4: return TileVnni<4, kVecs>(a, lda, b, quads, out);
    case 5: return TileVnni<5, kVecs>(a, lda, b, quads, out);
    case 6: return TileVnni<6, kVecs>(a, lda, b, quads, out);
    case 7: return TileVnni<7, kVecs>(a, lda, b, quads, out);
    default: return TileVnni<8, kVecs>(a, lda, b, quads, out);
  }
}

// AVX-512BW: each 32-bit lane of A (4 uint8) and B (4 int8) splits into its even and odd bytes as
// 16-bit values; two vpmaddwd then sum the 4 products exactly. kBounded: B's pairs are bounded
// (QPackedB::pairs_bounded), so vpmaddubsw sums each pair of byte products in int16 without
// saturating and vpmaddwd by ones adds a k-quad's two pairs: three instructions per row and vector
// of a k-quad instead of four, and no split of A or B.
template <int kRows, bool kBounded>
HWY_NOINLINE void TileBw(const uint8_t* HWY_RESTRICT a, int64_t lda, const int8_t* HWY_RESTRICT b, int64_t quads,
                         int32_t* HWY_RESTRICT out) {
  __m512i acc[kRows][3];
  HWY_UNROLL(8)
  for (int r = 0; r < kRows; ++r) {
    acc[r][0] = _mm512_setzero_si512();
    acc[r][1] = _mm512_setzero_si512();
    acc[r][2] = _mm512_setzero_si512();
  }
  const __m512i ones = _mm512_set1_epi16(1);
  for (int64_t q = 0; q < quads; ++q) {
    const int8_t* bq = b + q * (kQNr * 4);
    __m512i bv[3], be[3], bo[3];
    HWY_UNROLL(3)
    for (int v = 0; v < 3; ++v) {
      bv[v] = _mm512_load_si512(bq + 64 * v);
      if constexpr (!kBounded) {
        be[v] = _mm512_srai_epi16(_mm512_slli_epi16(bv[v], 8), 8);
        bo[v] = _mm512_srai_epi16(bv[v], 8);
      }
    }
    HWY_UNROLL(8)
    for (int r = 0; r < kRows; ++r) {
      // The row's 4 bytes broadcast, then split in the vector (see TileAvx2).
      const __m512i x = _mm512_set1_epi32(Load4(a + r * lda + q * 4));
      if constexpr (kBounded) {
        HWY_UNROLL(3)
        for (int v = 0; v < 3; ++v) {
          acc[r][v] = _mm512_add_epi32(acc[r][v], _mm512_madd_epi16(_mm512_maddubs_epi16(x, bv[v]), ones));
        }
        continue;
      }
      const __m512i ae = _mm512_and_si512(x, _mm512_set1_epi16(0x00FF));
      const __m512i ao = _mm512_srli_epi16(x, 8);
      HWY_UNROLL(3)
      for (int v = 0; v < 3; ++v) {
        acc[r][v] = _mm512_add_epi32(acc[r][v], _mm512_madd_epi16(ae, be[v]));
        acc[r][v] = _mm512_add_epi32(acc[r][v], _mm512_madd_epi16(ao, bo[v]));
      }
    }
  }
  HWY_UNROLL(8)
  for (int r = 0; r < kRows; ++r) {
    HWY_UNROLL(3)
    for (int v = 0; v < 3; ++v) _mm512_store_si512(out + r * kQNr + 16 * v, acc[r][v]);
  }
}
#endif  // HWY_AVX3

#if HWY_TARGET == HWY_AVX2
// The AVX-512BW scheme on 256 bits (kBounded as there), a 16-column third of the strip at a time:
// only the thirds that hold wanted columns (a convolution of 16 or 32 output channels reads one or
// two).
template <int kRows, bool kBounded>
HWY_NOINLINE void TileAvx2(const uint8_t* HWY_RESTRICT a, int64_t lda, const int8_t* HWY_RESTRICT b, int64_t quads,
                           int64_t cols, int32_t* HWY_RESTRICT out) {
  const int parts = static_cast<int>(std::min<int64_t>(3, (cols + 15) / 16));
  const __m256i ones = _mm256_set1_epi16(1);
  for (int part = 0; part < parts; ++part) {
    __m256i acc[kRows][2];
    HWY_UNROLL(4)
    for (int r = 0; r < kRows; ++r) acc[r][0] = acc[r][1] = _mm256_setzero_si256();
    for (int64_t q = 0; q < quads; ++q) {
      const int8_t* bq = b + q * (kQNr * 4) + part * 64;
      __m256i bv[2], be[2], bo[2];
      HWY_UNROLL(2)
      for (int v = 0; v < 2; ++v) {
        bv[v] = _mm256_load_si256(reinterpret_cast<const __m256i*>(bq + 32 * v));
        if constexpr (!kBounded) {
          be[v] = _mm256_srai_epi16(_mm256_slli_epi16(bv[v], 8), 8);
          bo[v] = _mm256_srai_epi16(bv[v], 8);
        }
      }
      HWY_UNROLL(4)
      for (int r = 0; r < kRows; ++r) {
        // The row's 4 bytes broadcast from memory, then split into even and odd bytes in the
        // vector: masked and shifted in general registers, each row's split cost a transfer from
        // them per half (the dynamic-int8 BERT encoder's 128 x 3072 x 768 product ran at 34
        // GMAC/s on Zen 3).
        const __m256i x = _mm256_set1_epi32(Load4(a + r * lda + q * 4));
        if constexpr (kBounded) {
          HWY_UNROLL(2)
          for (int v = 0; v < 2; ++v) {
            acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(_mm256_maddubs_epi16(x, bv[v]), ones));
          }
          continue;
        }
        const __m256i ae = _mm256_and_si256(x, _mm256_set1_epi16(0x00FF));
        const __m256i ao = _mm256_srli_epi16(x, 8);
        HWY_UNROLL(2)
        for (int v = 0; v < 2; ++v) {
          acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(ae, be[v]));
          acc[r][v] = _mm256_add_epi32(acc[r][v], _mm256_madd_epi16(ao, bo[v]));
        }
      }
    }
    HWY_UNROLL(4)
    for (int r = 0; r < kRows; ++r) {
      HWY_UNROLL(2)
      for (int v = 0; v < 2; ++v) {
        _mm256_store_si256(reinterpret_cast<__m256i*>(out + r * kQNr + part * 16 + 8 * v), acc[r][v]);
      }
    }
  }
}
#endif  // HWY_AVX2

// The reference: any target without a kernel above.
inline void TilePlain(const uint8_t* a, int64_t lda, const int8_t* b, int64_t quads, int64_t rows, int32_t* out) {
  for (int64_t r = 0; r < rows; ++r) {
    int32_t* o = out + r * kQNr;
    for (int64_t j = 0; j < kQNr; ++j) o[j] = 0;
    for (int64_t q = 0; q < quads; ++q) {
      const uint8_t* aq = a + r * lda + q * 4;
      const int8_t* bq = b + q * (kQNr * 4);
      for (int64_t j = 0; j < kQNr; ++j) {
        o[j] += aq[0] * bq[j * 4] + aq[1] * bq[j * 4 + 1] + aq[2] * bq[j * 4 + 2] + aq[3] * bq[j * 4 + 3];
      }
    }
  }
}

// Rows of A per tile of this target's kernel (with VNNI or without).
constexpr int64_t RowsPerTile(bool vnni) {
#if HWY_TARGET == HWY_AVX3
  return vnni ? 8 : 6;
#elif HWY_TARGET == HWY_AVX2
  (void)vnni;
  return 4;
#else
  (void)vnni;
  return 4;
#endif
}

// Runs Kernel's instance for `rows` (its largest for more than it has).
template <typename Kernel, typename... Args>
void TileRows(int64_t rows, Args... args) {
  switch (std::min<int64_t>(rows, Kernel::kMaxRows)) {
    case 1: return Kernel::template Run<1>(args...);
    case 2: return Kernel::template Run<2>(args...);
    case 3: return Kernel::template Run<3>(args...);
    case 4: return Kernel::template Run<4>(args...);
    case 5: return Kernel::template Run<std::min(5, Kernel::kMaxRows)>(args...);
    default: return Kernel::template Run<Kernel::kMaxRows>(args...);
  }
}
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX2
// This target's kernel without VNNI: TileBw or TileAvx2, exact split or bounded pairs.
template <bool kBounded>
struct NoVnniTile {
  static constexpr int kMaxRows = static_cast<int>(RowsPerTile(/*vnni=*/false));
  template <int kRows, typename... Args>
  static void Run(Args... args) {
#if HWY_TARGET == HWY_AVX3
    TileBw<kRows, kBounded>(args...);
#else
    TileAvx2<kRows, kBounded>(args...);
#endif
  }
};
#endif

// `cols` (<= kQNr) of the strip are wanted; the tile's other columns may be left unwritten.
inline void Tile(bool vnni, bool pairs_bounded, const uint8_t* a, int64_t lda, const int8_t* b, int64_t quads,
                 int64_t rows, int64_t cols, int32_t* out) {
  (void)pairs_bounded;
#if HWY_TARGET == HWY_AVX3
  if (vnni) {
    if (cols <= 16) return TileVnniRows<1>(a, lda, b, quads, rows, out);
    if (cols <= 32) return TileVnniRows<2>(a, lda, b, quads, rows, out);
    return TileVnniRows<3>(a, lda, b, quads, rows, out);
  }
  (void)cols;
  return pairs_bounded ? TileRows<NoVnniTile<true>>(rows, a, lda, b, quads, out)
                       : TileRows<NoVnniTile<false>>(rows, a, lda, b, quads, out);
#elif HWY_TARGET == HWY_AVX2
  (void)vnni;
  return pairs_bounded ? TileRows<NoVnniTile<true>>(rows, a, lda, b, quads, cols, out)
                       : TileRows<NoVnniTile<false>>(rows, a, lda, b, quads, cols, out);
#else
  (void)vnni;
  (void)cols;
  TilePlain(a, lda, b, quads, rows, out);
#endif
}

// Adds back to a tile's `rows` rows (of A at a, stride lda) what bounding its strip's pairs took
// out of B (QPackedB::pairs_bounded): fixes [f0, f1).
inline void AddPairFixes(const QPairFix* HWY_RESTRICT fixes, int64_t f0, int64_t f1, const uint8_t* HWY_RESTRICT a,
                         int64_t lda, int64_t rows, int32_t* HWY_RESTRICT tile) {
  for (int64_t f = f0; f < f1; ++f) {
    const QPairFix fix = fixes[f];
    for (int64_t r = 0; r < rows; ++r) tile[r * kQNr + fix.col] += a[r * lda + fix.k] * fix.delta;
  }
}

// Applies the epilogue to rows [0, rows) x columns [0, cols) of a tile (row stride kQNr) and
// stores them at c (row stride ldc elements). Per-column arrays are readable up to kQNr.
inline void Epilogue(const qgemm_internal::QBlock& blk, int64_t row0, int64_t col0, int64_t rows, int64_t cols,
                     const int32_t* HWY_RESTRICT tile) {
  const hn::ScalableTag<int32_t> di;
  const hn::Rebind<float, decltype(di)> df;
  const hn::Rebind<uint8_t, decltype(di)> du8;
  const hn::Rebind<int8_t, decltype(di)> di8;
  using VI = hn::Vec<decltype(di)>;
  using VF = hn::Vec<decltype(df)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(di));
  const int32_t* zb = blk.zb + col0;
  const int32_t* bt = blk.b_term + col0;
  const int32_t* bc = blk.bias_col != nullptr ? blk.bias_col + col0 : nullptr;
  const float* sc = blk.scale_col != nullptr ? blk.scale_col + col0 : nullptr;
  const float* fb = blk.fbias_col != nullptr ? blk.fbias_col + col0 : nullptr;
  HWY_ALIGN int32_t tail_i[hn::MaxLanes(di)];
  HWY_ALIGN float tail_f[hn::MaxLanes(df)];
  HWY_ALIGN uint8_t tail_b[hn::MaxLanes(du8)];
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t i = row0 + r;
    const VI nrs = hn::Set(di, blk.neg_row_sum[i]);
    const VI nza = hn::Set(di, blk.neg_za[i]);
    const VI br = hn::Set(di, blk.bias_row != nullptr ? blk.bias_row[i] : 0);
    const VF sr = hn::Set(df, blk.scale_row != nullptr ? blk.scale_row[i] : 1.0f);
    const int32_t* t = tile + r * kQNr;
    for (int64_t j = 0; j < cols; j += lanes) {
      VI v = hn::Add(hn::Load(di, t + j), hn::Mul(nrs, hn::LoadU(di, zb + j)));
      v = hn::Add(hn::Add(v, hn::Mul(nza, hn::LoadU(di, bt + j))), br);
      if (bc != nullptr) v = hn::Add(v, hn::LoadU(di, bc + j));
      const int64_t left = std::min(lanes, cols - j);
      switch (blk.kind) {
        case QOutput::kInt32: {
          int32_t* dst = static_cast<int32_t*>(blk.c) + i * blk.ldc + col0 + j;
          if (left == lanes) {
            hn::StoreU(v, di, dst);
          } else {
            hn::Store(v, di, tail_i);
            std::memcpy(dst, tail_i, left * sizeof(int32_t));
          }
          break;
        }
        case QOutput::kFloat: {
          VF s = sr;
          if (sc != nullptr) s = hn::Mul(s, hn::LoadU(df, sc + j));
          VF f = hn::Mul(hn::ConvertTo(df, v), s);
          if (fb != nullptr) f = hn::Add(f, hn::LoadU(df, fb + j));
          float* dst = static_cast<float*>(blk.c) + i * blk.ldc + col0 + j;
          if (left == lanes) {
            hn::StoreU(f, df, dst);
          } else {
            hn::Store(f, df, tail_f);
            std::memcpy(dst, tail_f, left * sizeof(float));
          }
          break;
        }
        case QOutput::kUint8:
        case QOutput::kInt8: {
          VF s = sr;
          if (sc != nullptr) s = hn::Mul(s, hn::LoadU(df, sc + j));
          // A multiplier already divided by the output scale comes with out_scale 1 (x / 1 is x).
          if (blk.out_scale != 1.0f) s = hn::Div(s, hn::Set(df, blk.out_scale));
          // Clamped to +-65536 (past any 8-bit result) as the VNNI epilogue does: NearestInt
          // saturates at +-2^31, and the zero point added to that wrapped (a multiplier of 1e5 on
          // a 1x1 layer gave 0 for 255).
          const VF limit = hn::Set(df, 65536.0f);
          const VF f = hn::Min(hn::Max(hn::Mul(hn::ConvertTo(df, v), s), hn::Neg(limit)), limit);
          const VI q = hn::Add(hn::NearestInt(f), hn::Set(di, blk.out_zero));
          uint8_t* dst = static_cast<uint8_t*>(blk.c) + i * blk.ldc + col0 + j;
          if (blk.kind == QOutput::kUint8) {
            hn::Store(hn::DemoteTo(du8, q), du8, tail_b);
          } else {
            hn::Store(hn::DemoteTo(di8, q), di8, reinterpret_cast<int8_t*>(tail_b));
          }
          std::memcpy(dst, tail_b, left);
          break;
        }
      }
    }
  }
}

}  // namespace qgemm_detail

void RunQBlockImpl(const qgemm_internal::QBlock& blk);

namespace qgemm_detail {

#if HWY_TARGET == HWY_AVX3
// Adds the products of the last `quads` k-quads (A from a, B from quad 16 * chunks of each vector
// in bp) to the tile's `rows` (a multiple of 8) x 16 * vecs values.
inline void AddTailVnni(const uint8_t* a, int64_t lda, const int8_t* const* bp, int64_t chunks, int64_t quads,
                        int64_t rows, int vecs, int32_t* tile) {
  const int64_t skip = chunks * (qgemm_amx::kTileK / 4) * (kQNr * 4);
  const int8_t* b[2] = {bp[0] + skip, vecs > 1 ? bp[1] + skip : bp[0] + skip};
  for (int64_t r = 0; r < rows; r += 8) {
    if (vecs > 1) {
      TileVnniCols<8, 2, true>(a + r * lda, lda, b, quads, tile + r * kQNr, kQNr);
    } else {
      TileVnniCols<8, 1, true>(a + r * lda, lda, b, quads, tile + r * kQNr, kQNr);
    }
  }
}

// The AMX path of a block (qgemm_amx.h): its whole 16-row tiles by runs of 32 columns (two vectors
// of 16, each read from its own strip of B, as RunRequantVnni's runs of 64 are), the k-quads past
// the last 64-byte chunk of K added on VNNI, then the AVX-512 epilogues on the int32 tile; the rows
// past the last whole tile go to the VNNI kernels. Runs keep their 32 columns of B (K * 32 bytes)
// in L1 while every tile of rows passes them.
inline void RunAmx(const qgemm_internal::QBlock& blk, int64_t lda, int64_t quads) {
  constexpr int64_t kRun = 32;
  HWY_ALIGN int32_t tile[2 * qgemm_amx::kTileRows * kQNr];
  const int64_t whole = blk.m / qgemm_amx::kTileRows * qgemm_amx::kTileRows;
  const int64_t chunks = quads * 4 / qgemm_amx::kTileK;
  const int64_t tail_quads = quads - chunks * (qgemm_amx::kTileK / 4);
  const bool requantize = blk.kind == QOutput::kUint8 || blk.kind == QOutput::kInt8;
  {
    const qgemm_amx::TileScope tiles;
    for (int64_t j0 = 0; j0 < blk.n; j0 += kRun) {
      const int64_t cols = std::min(kRun, blk.n - j0);
      const int vecs = cols > 16 ? 2 : 1;
      const int8_t* bp[2];
      for (int v = 0; v < vecs; ++v) {
        const int64_t col = j0 + 16 * v;
        bp[v] = VectorOfB(blk, col);
      }
      for (int64_t i0 = 0; i0 < whole; i0 += 2 * qgemm_amx::kTileRows) {
        const int row_tiles = whole - i0 >= 2 * qgemm_amx::kTileRows ? 2 : 1;
        const int64_t rows = row_tiles * qgemm_amx::kTileRows;
        qgemm_amx::Products(blk.a + i0 * lda, lda, bp, chunks, row_tiles, vecs, tile, kQNr);
        if (tail_quads > 0) {
          AddTailVnni(blk.a + i0 * lda + chunks * qgemm_amx::kTileK, lda, bp, chunks, tail_quads, rows, vecs, tile);
        }
        if (requantize) {
          vecs > 1 ? RequantizeTile<2>(tile, kQNr, rows, blk, i0, j0, cols)
                   : RequantizeTile<1>(tile, kQNr, rows, blk, i0, j0, cols);
        } else {
          vecs > 1 ? FinishTile<2>(tile, kQNr, rows, blk, i0, j0, cols) : FinishTile<1>(tile, kQNr, rows, blk, i0, j0, cols);
        }
      }
    }
  }
  if (whole == blk.m) return;
  qgemm_internal::QBlock rest = blk;
  rest.amx = false;
  rest.m = blk.m - whole;
  rest.a = blk.a + whole * lda;
  rest.neg_row_sum = blk.neg_row_sum + whole;
  rest.neg_za = blk.neg_za + whole;
  if (blk.bias_row != nullptr) rest.bias_row = blk.bias_row + whole;
  if (blk.scale_row != nullptr) rest.scale_row = blk.scale_row + whole;
  rest.c = static_cast<uint8_t*>(blk.c) + whole * blk.ldc * qgemm_internal::OutputBytes(blk.kind);
  RunQBlockImpl(rest);
}
#endif

}  // namespace qgemm_detail

void RunQBlockImpl(const qgemm_internal::QBlock& blk) {
  using namespace qgemm_detail;  // NOLINT
  const int64_t quads = blk.kp / 4;
  [[maybe_unused]] const bool requant = blk.kind == QOutput::kUint8 || blk.kind == QOutput::kInt8;
  // Fixes of bounded pairs are added back by the tile loop below only (B is bounded where it is
  // packed for AVX2 or AVX-512BW, whose kernels are all there).
  const bool fixes = blk.fix_starts != nullptr;
  if (blk.a == nullptr && blk.source != nullptr) {
#if HWY_TARGET == HWY_AVX3
    if (blk.vnni && !blk.amx && requant && !fixes) return RunRequantVnni(blk, blk.kp, quads);
#endif
    // Another kernel (a target the driver did not expect): the block's rows gathered first.
    qgemm_internal::QBlock gathered = blk;
    gathered.lda = blk.kp;
    gathered.a = blk.source->Rows(blk.source_row0, blk.m, blk.scratch, &gathered.lda);
    gathered.source = nullptr;
    return RunQBlockImpl(gathered);
  }
  const int64_t lda = blk.lda != 0 ? blk.lda : blk.kp;
  const int64_t mr = RowsPerTile(blk.vnni);
#if HWY_TARGET == HWY_AVX3
  if (blk.vnni && blk.amx && blk.m >= qgemm_amx::kTileRows && !fixes) return RunAmx(blk, lda, quads);
  if (blk.vnni && requant && !fixes) return RunRequantVnni(blk, lda, quads);
#endif
  HWY_ALIGN int32_t tile[kMaxRows * kQNr];
  for (int64_t j0 = 0; j0 < blk.n; j0 += kQNr) {
    const int64_t strip = j0 / kQNr;
    const int8_t* b = blk.b + strip * blk.strip_bytes;
    const int64_t cols = std::min(kQNr, blk.n - j0);
    for (int64_t i0 = 0; i0 < blk.m; i0 += mr) {
      const int64_t rows = std::min(mr, blk.m - i0);
      const uint8_t* a = blk.a + i0 * lda;
      Tile(blk.vnni, blk.pairs_bounded, a, lda, b, quads, rows, cols, tile);
      if (fixes) AddPairFixes(blk.fixes, blk.fix_starts[strip], blk.fix_starts[strip + 1], a, lda, rows, tile);
      Epilogue(blk, i0, j0, rows, cols, tile);
    }
  }
}

int64_t QRowsPerTileImpl(bool vnni) { return qgemm_detail::RowsPerTile(vnni); }

bool QTargetHasVnniKernelImpl() { return HWY_TARGET == HWY_AVX3; }

// Whether this target has vpmaddubsw kernels for bounded pairs (on AVX-512, used without VNNI).
bool QTargetBoundsPairsImpl() { return HWY_TARGET == HWY_AVX2 || HWY_TARGET == HWY_AVX3; }

// Packs rows [i0, i1) of A (see QPackedA): stored = source ^ x, zeros to kp, and the row sums.
void QPackARowsImpl(const uint8_t* HWY_RESTRICT a, uint8_t x, int64_t lda, int64_t k, int64_t kp, int64_t i0,
                    int64_t i1, uint8_t* HWY_RESTRICT dst, int32_t* HWY_RESTRICT row_sums) {
#if HWY_TARGET == HWY_SCALAR
  for (int64_t i = i0; i < i1; ++i) {
    int32_t sum = 0;
    for (int64_t kk = 0; kk < kp; ++kk) {
      dst[i * kp + kk] = kk < k ? a[i * lda + kk] ^ x : 0;
      sum += dst[i * kp + kk];
    }
    row_sums[i] = sum;
  }
#else
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d8));
  const auto vx = hn::Set(d8, x);
  for (int64_t i = i0; i < i1; ++i) {
    const uint8_t* s = a + i * lda;
    uint8_t* d = dst + i * kp;
    auto acc = hn::Zero(d64);
    int64_t kk = 0;
    for (; kk + lanes <= k; kk += lanes) {
      const auto v = hn::Xor(hn::LoadU(d8, s + kk), vx);
      hn::StoreU(v, d8, d + kk);
      acc = hn::Add(acc, hn::SumsOf8(v));
    }
    uint64_t sum = hn::GetLane(hn::SumOfLanes(d64, acc));
    for (; kk < k; ++kk) {
      d[kk] = s[kk] ^ x;
      sum += d[kk];
    }
    for (; kk < kp; ++kk) d[kk] = 0;
    row_sums[i] = static_cast<int32_t>(sum);
  }
#endif
}

// Sums of bytes [0, k) of rows [0, rows) (row i at a + i * lda), as uint8: A's row sums for the
// zero point of B when A is read in place or gathered.
void QRowSumsImpl(const uint8_t* HWY_RESTRICT a, int64_t lda, int64_t rows, int64_t k, int32_t* HWY_RESTRICT sums) {
#if HWY_TARGET == HWY_SCALAR
  for (int64_t i = 0; i < rows; ++i) {
    int32_t sum = 0;
    for (int64_t kk = 0; kk < k; ++kk) sum += a[i * lda + kk];
    sums[i] = sum;
  }
#else
  const hn::ScalableTag<uint8_t> d8;
  const hn::Repartition<uint64_t, decltype(d8)> d64;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d8));
  for (int64_t i = 0; i < rows; ++i) {
    const uint8_t* s = a + i * lda;
    auto acc = hn::Zero(d64);
    int64_t kk = 0;
    for (; kk + lanes <= k; kk += lanes) acc = hn::Add(acc, hn::SumsOf8(hn::LoadU(d8, s + kk)));
    uint64_t sum = hn::GetLane(hn::SumOfLanes(d64, acc));
    // The rest 8 bytes at a time: a 1x1 convolution over 16..48 channels (MobileNetV2) has no
    // whole 64-byte vector, and byte by byte its row sums were a scalar loop over all of K.
    const hn::CappedTag<uint8_t, 8> d8x8;
    for (; kk + 8 <= k; kk += 8) sum += hn::GetLane(hn::SumsOf8(hn::LoadU(d8x8, s + kk)));
    for (; kk < k; ++kk) sum += s[kk];
    sums[i] = static_cast<int32_t>(sum);
  }
#endif
}

// Packs strips [t0, t1) of op(B) (see QPackedB), `flip` xors every byte with 0x80 (uint8 -> int8
// minus 128), and writes each strip's column sums of the stored values.
void QPackBImpl(const uint8_t* HWY_RESTRICT b, bool flip, int64_t ldb, bool trans, int64_t k, int64_t n,
                int64_t kp, int64_t t0, int64_t t1, int8_t* HWY_RESTRICT dst, int32_t* HWY_RESTRICT col_sums) {
  const uint8_t x = flip ? 0x80 : 0;
  for (int64_t t = t0; t < t1; ++t) {
    int8_t* s = dst + t * kp * kQNr;
    const int64_t j0 = t * kQNr;
    const int64_t cols = std::min(kQNr, n - j0);
    int32_t* sums = col_sums + j0;
    for (int64_t j = 0; j < kQNr; ++j) sums[j] = 0;
    if (trans) {
      std::memset(s, 0, kp * kQNr);
      for (int64_t j = 0; j < cols; ++j) {
        const uint8_t* src = b + (j0 + j) * ldb;
        int32_t sum = 0;
        for (int64_t kk = 0; kk < k; ++kk) {
          const int8_t v = static_cast<int8_t>(src[kk] ^ x);
          s[(kk / 4) * kQNr * 4 + j * 4 + kk % 4] = v;
          sum += v;
        }
        sums[j] = sum;
      }
      continue;
    }
#if HWY_TARGET != HWY_SCALAR
    if (cols == kQNr) {
      const hn::FixedTag<uint8_t, 16> d8;
      const hn::FixedTag<uint16_t, 8> d16;
      const auto vx = hn::Set(d8, x);
      const hn::ScalableTag<int32_t> d32;
      const hn::Rebind<int8_t, decltype(d32)> d8s;
      const int64_t lanes = static_cast<int64_t>(hn::Lanes(d32));
      for (int64_t q = 0; q * 4 < k; ++q) {
        const uint8_t* rows[4];
        bool full = true;
        for (int e = 0; e < 4; ++e) {
          full = full && 4 * q + e < k;
          rows[e] = 4 * q + e < k ? b + (4 * q + e) * ldb + j0 : nullptr;
        }
        int8_t* out = s + q * kQNr * 4;
        if (!full) {
          for (int64_t j = 0; j < kQNr; ++j) {
            for (int e = 0; e < 4; ++e) out[j * 4 + e] = rows[e] != nullptr ? static_cast<int8_t>(rows[e][j] ^ x) : 0;
          }
        } else {
          for (int64_t g = 0; g < kQNr; g += 16) {
            const auto r0 = hn::Xor(hn::LoadU(d8, rows[0] + g), vx);
            const auto r1 = hn::Xor(hn::LoadU(d8, rows[1] + g), vx);
            const auto r2 = hn::Xor(hn::LoadU(d8, rows[2] + g), vx);
            const auto r3 = hn::Xor(hn::LoadU(d8, rows[3] + g), vx);
            const auto lo01 = hn::BitCast(d16, hn::InterleaveLower(d8, r0, r1));
            const auto hi01 = hn::BitCast(d16, hn::InterleaveUpper(d8, r0, r1));
            const auto lo23 = hn::BitCast(d16, hn::InterleaveLower(d8, r2, r3));
            const auto hi23 = hn::BitCast(d16, hn::InterleaveUpper(d8, r2, r3));
            uint8_t* o = reinterpret_cast<uint8_t*>(out + g * 4);
            hn::StoreU(hn::BitCast(d8, hn::InterleaveLower(d16, lo01, lo23)), d8, o);
            hn::StoreU(hn::BitCast(d8, hn::InterleaveUpper(d16, lo01, lo23)), d8, o + 16);
            hn::StoreU(hn::BitCast(d8, hn::InterleaveLower(d16, hi01, hi23)), d8, o + 32);
            hn::StoreU(hn::BitCast(d8, hn::InterleaveUpper(d16, hi01, hi23)), d8, o + 48);
          }
        }
      }
      // Column sums of the stored values from the source rows (contiguous): stored = source ^ x,
      // which is the source read as int8 when x is 0, and the source read as uint8 minus 128.
      if (!flip) {
        for (int64_t kk = 0; kk < k; ++kk) {
          const int8_t* src = reinterpret_cast<const int8_t*>(b + kk * ldb + j0);
          for (int64_t j = 0; j < kQNr; j += lanes) {
            hn::StoreU(hn::Add(hn::LoadU(d32, sums + j), hn::PromoteTo(d32, hn::LoadU(d8s, src + j))), d32, sums + j);
          }
        }
      } else {
        const hn::Rebind<uint8_t, decltype(d32)> d8u;
        const hn::Rebind<uint32_t, decltype(d32)> d32u;
        for (int64_t kk = 0; kk < k; ++kk) {
          const uint8_t* src = b + kk * ldb + j0;
          for (int64_t j = 0; j < kQNr; j += lanes) {
            const auto v = hn::BitCast(d32, hn::PromoteTo(d32u, hn::LoadU(d8u, src + j)));
            hn::StoreU(hn::Add(hn::LoadU(d32, sums + j), v), d32, sums + j);
          }
        }
        for (int64_t j = 0; j < kQNr; ++j) sums[j] -= static_cast<int32_t>(128 * k);
      }
      continue;
    }
#endif
    for (int64_t q = 0; q < kp / 4; ++q) {
      int8_t* out = s + q * kQNr * 4;
      for (int64_t j = 0; j < kQNr; ++j) {
        for (int e = 0; e < 4; ++e) {
          const int64_t kk = 4 * q + e;
          int8_t v = 0;
          if (kk < k && j < cols) v = static_cast<int8_t>(b[kk * ldb + j0 + j] ^ x);
          out[j * 4 + e] = v;
          sums[j] += v;
        }
      }
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
