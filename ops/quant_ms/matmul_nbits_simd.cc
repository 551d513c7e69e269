#include "ops/quant_ms/matmul_nbits.h"

#include <algorithm>
#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/quant_ms/matmul_nbits_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace quant_ms {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 float lanes: a group's 16 bytes fill one AVX-512 vector of 32-bit lanes.
using DF = hn::CappedTag<float, 16>;

// sum_i x[i] * y[i]: the zero-point correction of one column (a dot product over its blocks,
// vectorized: as a scalar chain of FMAs it was a third of an M = 1, K = N = 4096 MatMul's time).
float Dot(const float* x, const float* y, int64_t n) {
  const DF df;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto acc = hn::Zero(df);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) acc = hn::MulAdd(hn::LoadU(df, x + i), hn::LoadU(df, y + i), acc);
  float sum = hn::GetLane(hn::SumOfLanes(df, acc));
  for (; i < n; ++i) sum += x[i] * y[i];
  return sum;
}

// Four columns at a time share each load of A and give the FMA units four independent chains
// (two per column: low and high halves of a group). The loops over columns and lanes have
// compile-time trip counts and are unrolled, so the accumulators stay in registers (with a
// run-time lane count the compiler kept them on the stack).
template <int kCols>
void Columns(const PackedNBits& b, const float* a, const float* block_sums, int64_t j, float* y) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, DF> du8;
  constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(DF()));
  static_assert(16 % kLanes == 0, "a group's 16 bytes are whole vectors");
  const auto mask = hn::Set(di, 15);
  const uint8_t* col[kCols];
  const float* sc[kCols];
  HWY_UNROLL(4)
  for (int c = 0; c < kCols; ++c) {
    col[c] = b.column(j + c);
    sc[c] = b.scales.data() + (j + c) * b.blocks;
  }
  hn::Vec<DF> total[kCols];
  HWY_UNROLL(4)
  for (int c = 0; c < kCols; ++c) total[c] = hn::Zero(df);
  const int64_t bs = b.block_size;
  for (int64_t blk = 0; blk < b.blocks; ++blk) {
    hn::Vec<DF> lo[kCols], hi[kCols];
    HWY_UNROLL(4)
    for (int c = 0; c < kCols; ++c) lo[c] = hi[c] = hn::Zero(df);
    const int64_t e_begin = blk * bs, e_end = e_begin + bs;
    if (bs >= 32) {
      for (int64_t e = e_begin; e < e_end; e += 32) {
        const int64_t byte0 = e / 2;
        HWY_UNROLL(16)
        for (int64_t l = 0; l < 16; l += kLanes) {
          const auto a_lo = hn::LoadU(df, a + e + l), a_hi = hn::LoadU(df, a + e + 16 + l);
          HWY_UNROLL(4)
          for (int c = 0; c < kCols; ++c) {
            const auto v = hn::PromoteTo(di, hn::LoadU(du8, col[c] + byte0 + l));
            lo[c] = hn::MulAdd(a_lo, hn::ConvertTo(df, hn::And(v, mask)), lo[c]);
            hi[c] = hn::MulAdd(a_hi, hn::ConvertTo(df, hn::ShiftRight<4>(v)), hi[c]);
          }
        }
      }
    } else {  // a block of 16 is one half of a group
      const int64_t byte0 = (e_begin / 32) * 16;
      const bool high = (e_begin / 16) & 1;
      HWY_UNROLL(16)
      for (int64_t l = 0; l < 16; l += kLanes) {
        const auto va = hn::LoadU(df, a + e_begin + l);
        HWY_UNROLL(4)
        for (int c = 0; c < kCols; ++c) {
          const auto v = hn::PromoteTo(di, hn::LoadU(du8, col[c] + byte0 + l));
          const auto q = high ? hn::ShiftRight<4>(v) : hn::And(v, mask);
          lo[c] = hn::MulAdd(va, hn::ConvertTo(df, q), lo[c]);
        }
      }
    }
    HWY_UNROLL(4)
    for (int c = 0; c < kCols; ++c) total[c] = hn::MulAdd(hn::Add(lo[c], hi[c]), hn::Set(df, sc[c][blk]), total[c]);
  }
  for (int c = 0; c < kCols; ++c) {
    const float corr = Dot(b.scaled_zero.data() + (j + c) * b.blocks, block_sums, b.blocks);
    y[c] = hn::GetLane(hn::SumOfLanes(df, total[c])) - corr;
  }
}

void Row(const PackedNBits& b, const float* a, const float* block_sums, int64_t j0, int64_t j1, float* y) {
  int64_t j = j0;
  for (; j + 4 <= j1; j += 4) Columns<4>(b, a, block_sums, j, y + j - j0);
  for (; j < j1; ++j) Columns<1>(b, a, block_sums, j, y + j - j0);
}

}  // namespace HWY_NAMESPACE
}  // namespace quant_ms
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#if HWY_ARCH_X86
#include <immintrin.h>
#endif

namespace onnxflow {
namespace quant_ms {

HWY_EXPORT(Row);

bool NBitsInt8Available(const PackedNBits& b) {
#if HWY_ARCH_X86 && (defined(__GNUC__) || defined(__clang__))
  // The build disables Highway's AVX3_DL target (.bazelrc), the one that would carry VNNI, so
  // this kernel is plain intrinsics behind a CPU check.
  static const bool vnni = __builtin_cpu_supports("avx512vnni") && __builtin_cpu_supports("avx512bw") &&
                           __builtin_cpu_supports("avx512vl");
  // Powers of two (the spec's block sizes): the kernel finds a quad's blocks by shifting.
  return vnni && b.block_size >= 32 && (b.block_size & (b.block_size - 1)) == 0;
#else
  (void)b;
  return false;
#endif
}

// Lane order of one quad of groups (128 values from 128 * q; 64 bytes of a column): byte i of
// the quad holds value i % 16 of group i / 16 in its low nibble and value 16 + i % 16 in its high
// nibble, so the 4 bytes of each 32-bit lane belong to one group (lanes 4g to 4g + 3: group g).
// A is stored as the two matching byte vectors: `lo` (values 0-15 of each group) then `hi`.
void QuantizeRowForNBits(const PackedNBits& b, const float* a, Int8Row* row) {
  const int64_t quads = b.column_bytes / 64, bs = b.block_size;
  row->q.assign(quads * 128, 0);
  row->lane_scales.assign(quads * 16, 0.f);
  row->lane_sums.assign(quads * 16, 0);
  row->block_corr.assign(b.blocks, 0.f);
  row->block_scale.assign(b.blocks, 0.f);
  std::vector<int8_t> plain(quads * 128, 0);
  for (int64_t blk = 0; blk < b.blocks; ++blk) {
    const int64_t e0 = blk * bs, e1 = std::min(b.k, e0 + bs);
    float amax = 0;
    for (int64_t e = e0; e < e1; ++e) amax = std::max(amax, std::abs(a[e]));
    const float scale = amax / 127.f, inv = amax > 0 ? 127.f / amax : 0.f;
    int32_t sum = 0;
    for (int64_t e = e0; e < e1; ++e) {
      const int32_t q = static_cast<int32_t>(std::nearbyint(a[e] * inv));
      plain[e] = static_cast<int8_t>(std::min(127, std::max(-127, q)));
      sum += plain[e];
    }
    row->block_scale[blk] = scale;
    row->block_corr[blk] = scale * static_cast<float>(sum);
  }
  for (int64_t q = 0; q < quads; ++q) {
    for (int64_t i = 0; i < 64; ++i) {
      const int64_t value = q * 128 + (i / 16) * 32 + i % 16;
      row->q[q * 128 + i] = plain[value];
      row->q[q * 128 + 64 + i] = plain[value + 16];
    }
    for (int lane = 0; lane < 16; ++lane) {
      const int64_t blk = (q * 4 + lane / 4) * 32 / bs;
      row->lane_scales[q * 16 + lane] = blk < b.blocks ? row->block_scale[blk] : 0.f;
      int32_t sum = 0;
      for (int e = 0; e < 4; ++e) sum += row->q[q * 128 + lane * 4 + e] + row->q[q * 128 + 64 + lane * 4 + e];
      row->lane_sums[q * 16 + lane] = sum;
    }
  }
}

#if HWY_ARCH_X86 && (defined(__GNUC__) || defined(__clang__))
#define ONNXFLOW_VNNI_ATTR __attribute__((target("avx2,fma,avx512f,avx512vl,avx512dq,avx512bw,avx512vnni")))

// Four columns share each load of A. Per quad of groups and column: one 64-byte load of B, a
// shift and two masks to nibbles, two vpdpbusd (128 products), the column scales of the quad's
// groups spread over their lanes (one masked load, one permute), a conversion and one FMA by
// the lane scales. (The former pair-at-a-time kernel spent 2 scalar loads, 2 broadcasts and a
// blend per 64 products on the scales: 0.77-1.14 ms against ONNX Runtime's 0.38 for M = 1,
// K = N = 4096, block 32, loaded machine.)
template <int kCols>
ONNXFLOW_VNNI_ATTR void ColumnsInt8(const PackedNBits& b, const Int8Row& a, int64_t j, float* y) {
  const int64_t quads = b.column_bytes / 64, bs = b.block_size;
  const __m512i nibble = _mm512_set1_epi8(0x0F);
  // Lane -> the block of its group relative to the quad's first block.
  alignas(64) int32_t spread[16];
  for (int lane = 0; lane < 16; ++lane) spread[lane] = static_cast<int32_t>((lane / 4) * 32 / bs);
  const __m512i spread_v = _mm512_load_si512(spread);
  const uint8_t* col[kCols];
  const float* sc[kCols];
  const uint8_t* zb[kCols];
  __m512 acc[kCols];
  const bool per_block_zero = b.uniform_zero < 0 && !b.zero_bytes.empty();
  const __m512i uniform_zero = _mm512_set1_epi32(std::max(b.uniform_zero, 0));
  for (int c = 0; c < kCols; ++c) {
    col[c] = b.column(j + c);
    sc[c] = b.scales.data() + (j + c) * b.blocks;
    zb[c] = per_block_zero ? b.zero_bytes.data() + (j + c) * (b.blocks + 4) : nullptr;
    acc[c] = _mm512_setzero_ps();
  }
  const int shift = __builtin_ctzll(static_cast<uint64_t>(bs));  // block sizes are powers of two
  for (int64_t q = 0; q < quads; ++q) {
    const __m512i a_lo = _mm512_loadu_si512(a.q.data() + q * 128);
    const __m512i a_hi = _mm512_loadu_si512(a.q.data() + q * 128 + 64);
    const __m512 as = _mm512_loadu_ps(a.lane_scales.data() + q * 16);
    // Integer zero points come off in int32: sum (b - z) a = sum b a - z sum a, per lane (no
    // correction pass over the columns' scaled zero points, 2 MB a call at K = N = 4096). One z for
    // all of B: z sum a is the row's; else each column's z spread over the lanes like its scales.
    const __m512i sums = _mm512_loadu_si512(a.lane_sums.data() + q * 16);
    const __m512i za = _mm512_mullo_epi32(uniform_zero, sums);
    // The quad's blocks: up to 4 (block 32), masked at the column's end (a padded group has A 0).
    const int64_t first = (q * 128) >> shift, left = std::min<int64_t>(4, b.blocks - first);
    const __mmask8 valid = static_cast<__mmask8>((1u << std::max<int64_t>(left, 0)) - 1);
    // Unrolled, so that the accumulators stay in registers (rolled, GCC kept them on the stack).
#pragma GCC unroll 4
    for (int c = 0; c < kCols; ++c) {
      const __m512i raw = _mm512_loadu_si512(col[c] + q * 64);
      const __m512i lo = _mm512_and_si512(raw, nibble);
      const __m512i hi = _mm512_and_si512(_mm512_srli_epi16(raw, 4), nibble);
      __m512i zsum = za;
      if (per_block_zero) {
        const __m512i z = _mm512_cvtepu8_epi32(_mm_maskz_loadu_epi8(valid, zb[c] + first));
        zsum = _mm512_mullo_epi32(_mm512_permutexvar_epi32(spread_v, z), sums);
      }
      const __m512i dot = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(_mm512_sub_epi32(_mm512_setzero_si512(), zsum), lo, a_lo),
                                              hi, a_hi);
      const __m512 s = _mm512_permutexvar_ps(spread_v, _mm512_castps128_ps512(_mm_maskz_loadu_ps(valid, sc[c] + first)));
      acc[c] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(s, as), acc[c]);
    }
  }
  for (int c = 0; c < kCols; ++c) {
    if (b.uniform_zero >= 0 || per_block_zero) {
      y[c] = _mm512_reduce_add_ps(acc[c]);
      continue;
    }
    // The zero-point correction, a dot product over the column's blocks, 16 at a time.
    const float* sz = b.scaled_zero.data() + (j + c) * b.blocks;
    __m512 corr = _mm512_setzero_ps();
    int64_t blk = 0;
    for (; blk + 16 <= b.blocks; blk += 16) {
      corr = _mm512_fmadd_ps(_mm512_loadu_ps(sz + blk), _mm512_loadu_ps(a.block_corr.data() + blk), corr);
    }
    float tail = 0;
    for (; blk < b.blocks; ++blk) tail += sz[blk] * a.block_corr[blk];
    y[c] = _mm512_reduce_add_ps(acc[c]) - (_mm512_reduce_add_ps(corr) + tail);
  }
}

void MatMulNBitsRowInt8(const PackedNBits& b, const Int8Row& a, int64_t j0, int64_t j1, float* y) {
  int64_t j = j0;
  for (; j + 4 <= j1; j += 4) ColumnsInt8<4>(b, a, j, y + j - j0);
  for (; j < j1; ++j) ColumnsInt8<1>(b, a, j, y + j - j0);
}
#else
void MatMulNBitsRowInt8(const PackedNBits&, const Int8Row&, int64_t, int64_t, float*) {}
#endif

void MatMulNBitsRow(const PackedNBits& b, const float* a, const float* block_sums, int64_t j0, int64_t j1, float* y) {
  HWY_DYNAMIC_DISPATCH(Row)(b, a, block_sums, j0, j1, y);
}

void DequantizeNBitsPanel(const PackedNBits& b, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr,
                          float* dst) {
  const int64_t strips = (cols + nr - 1) / nr;
  for (int64_t t = 0; t < strips; ++t) {
    float* strip = dst + t * kc * nr;
    for (int64_t jj = 0; jj < nr; ++jj) {
      const int64_t j = t * nr + jj;
      if (j >= cols) {
        for (int64_t kk = 0; kk < kc; ++kk) strip[kk * nr + jj] = 0.f;
        continue;
      }
      const uint8_t* col = b.column(j0 + j);
      const float* s = b.scales.data() + (j0 + j) * b.blocks;
      const float* sz = b.scaled_zero.data() + (j0 + j) * b.blocks;
      for (int64_t kk = 0; kk < kc; ++kk) {
        const int64_t e = k0 + kk, blk = e / b.block_size;
        const uint8_t byte = col[(e / 32) * 16 + (e % 16)];
        const int q = (e & 16) ? byte >> 4 : byte & 15;
        strip[kk * nr + jj] = static_cast<float>(q) * s[blk] - sz[blk];
      }
    }
  }
}

}  // namespace quant_ms
}  // namespace onnxflow
#endif  // HWY_ONCE
