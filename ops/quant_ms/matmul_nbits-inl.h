// SIMD part of MatMulNBits (matmul_nbits.h): the float kernel (Highway) and, in the AVX-512
// targets (AVX3, and AVX3_DL should a build enable it) and AVX2 (4-bit B), the int8 kernel. Compiled once per CPU target through hwy/foreach_target.h (see
// matmul_nbits_simd.cc). Highway 1.0.3 has no 8-bit dot product, so the int8 kernel is
// intrinsics inside the AVX-512 target's code (vpdpbusd needs VNNI, which Highway's AVX3 target
// does not imply and its AVX3_DL target, which does, is not built here: the kernel carries its
// own attribute and runs only where the CPU has VNNI).

#if defined(ONNXFLOW_OPS_QUANT_MS_MATMUL_NBITS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_QUANT_MS_MATMUL_NBITS_INL_H_
#undef ONNXFLOW_OPS_QUANT_MS_MATMUL_NBITS_INL_H_
#else
#define ONNXFLOW_OPS_QUANT_MS_MATMUL_NBITS_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstring>

#include "hwy/highway.h"
#include "ops/quant_ms/matmul_nbits.h"

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_AVX2
#include <immintrin.h>
#endif

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

// sum_i x[i] * z[i] * y[i] with z bytes (a column's zero points): the correction when they are kept
// as bytes.
float DotBytes(const float* x, const uint8_t* z, const float* y, int64_t n) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, DF> du8;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto acc = hn::Zero(df);
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) {
    const auto zf = hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(du8, z + i)));
    acc = hn::MulAdd(hn::Mul(hn::LoadU(df, x + i), zf), hn::LoadU(df, y + i), acc);
  }
  float sum = hn::GetLane(hn::SumOfLanes(df, acc));
  for (; i < n; ++i) sum += x[i] * static_cast<float>(z[i]) * y[i];
  return sum;
}

// sum over column j's blocks of scale * zero * (the block's sum of A): what the zero points take
// off a one-row product whose blocks multiplied the raw codes.
float ZeroCorrection(const PackedNBits& b, int64_t j, const float* block_sums) {
  const float* s = b.scales.data() + j * b.blocks;
  if (!b.scaled_zero.empty()) return Dot(b.scaled_zero.data() + j * b.blocks, block_sums, b.blocks);
  if (!b.zero_bytes.empty()) return DotBytes(s, b.zero_bytes.data() + j * b.blocks, block_sums, b.blocks);
  return b.uniform_zero > 0 ? static_cast<float>(b.uniform_zero) * Dot(s, block_sums, b.blocks) : 0.f;
}

// Four columns at a time share each load of A and give the FMA units four independent chains
// (two per column: low and high halves of a group). The loops over columns and lanes have
// compile-time trip counts and are unrolled, so the accumulators stay in registers (with a
// run-time lane count the compiler kept them on the stack).
// The value of each code in v: the code itself, or its entry in b.codebook (a lane permute where
// a vector holds all 16 entries, a gather from memory on narrower targets).
template <bool kCodebook, class V>
HWY_INLINE hn::Vec<DF> Value(const PackedNBits& b, V v) {
  const DF df;
  if constexpr (!kCodebook) {
    return hn::ConvertTo(df, v);
  } else if constexpr (hn::MaxLanes(DF()) == 16) {
    return hn::TableLookupLanes(hn::LoadU(df, b.codebook.data()), hn::IndicesFromVec(df, v));
  } else {
    return hn::GatherIndex(df, b.codebook.data(), v);
  }
}

// The float layout's groups (matmul_nbits.h): 16 bytes hold kSlots = 8 / kBits slices of 16
// consecutive values, slice s in bits [s * kBits, (s + 1) * kBits) of every byte.
template <int kBits>
struct Groups {
  static constexpr int kSlots = 8 / kBits;
  static constexpr int64_t kValues = 16 * kSlots;
};

// Slice s of a group's 16 bytes widened to lanes: the values themselves.
template <int kBits, int kSlot, class V>
HWY_INLINE V Slice(V v) {
  const V mask = hn::Set(hn::DFromV<V>(), (1 << kBits) - 1);
  if constexpr (kBits == 8) {
    return v;
  } else if constexpr (kSlot == 0) {
    return hn::And(v, mask);
  } else if constexpr ((kSlot + 1) * kBits == 8) {  // the top bits: nothing above them
    return hn::ShiftRight<kSlot * kBits>(v);
  } else {
    return hn::And(hn::ShiftRight<kSlot * kBits>(v), mask);
  }
}
template <int kBits, class V>
HWY_INLINE V SliceAt(V v, int slot) {
  const V mask = hn::Set(hn::DFromV<V>(), (1 << kBits) - 1);
  return hn::And(hn::ShiftRightSame(v, slot * kBits), mask);
}

// Columns [j, j + kCols) of the float layout: each one's codes and its blocks' scales.
template <int kCols>
struct ColumnRefs {
  const uint8_t* col[kCols];
  const float* sc[kCols];
  ColumnRefs(const PackedNBits& b, int64_t j) {
    HWY_UNROLL(4)
    for (int c = 0; c < kCols; ++c) {
      col[c] = b.column(j + c);
      sc[c] = b.scales.data() + (j + c) * b.blocks;
    }
  }
};

template <int kCols, int kBits, bool kCodebook>
void Columns(const PackedNBits& b, const float* a, const float* block_sums, int64_t j, float* y) {
  using G = Groups<kBits>;
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, DF> du8;
  constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(DF()));
  static_assert(16 % kLanes == 0, "a group's 16 bytes are whole vectors");
  const ColumnRefs<kCols> refs(b, j);
  const auto& col = refs.col;
  const auto& sc = refs.sc;
  hn::Vec<DF> total[kCols];
  HWY_UNROLL(4)
  for (int c = 0; c < kCols; ++c) total[c] = hn::Zero(df);
  const int64_t bs = b.block_size;
  for (int64_t blk = 0; blk < b.blocks; ++blk) {
    // Two accumulators per column (even and odd slices): independent chains for the FMA units.
    hn::Vec<DF> acc[kCols][2];
    HWY_UNROLL(4)
    for (int c = 0; c < kCols; ++c) acc[c][0] = acc[c][1] = hn::Zero(df);
    const int64_t e_begin = blk * bs, e_end = e_begin + bs;
    if (bs % G::kValues == 0) {  // whole groups: one load of B serves every slice
      for (int64_t e = e_begin; e < e_end; e += G::kValues) {
        // e is a whole number of groups: its bytes start at e / kSlots (unsigned: a shift).
        const int64_t byte0 = static_cast<int64_t>(static_cast<uint64_t>(e) / G::kSlots);
        HWY_UNROLL(16)
        for (int64_t l = 0; l < 16; l += kLanes) {
          hn::Vec<DF> va[G::kSlots];
          HWY_UNROLL(4)
          for (int t = 0; t < G::kSlots; ++t) va[t] = hn::LoadU(df, a + e + 16 * t + l);
          HWY_UNROLL(4)
          for (int c = 0; c < kCols; ++c) {
            const auto v = hn::PromoteTo(di, hn::LoadU(du8, col[c] + byte0 + l));
            hn::Vec<DF> q[G::kSlots];
            if constexpr (G::kSlots >= 1) q[0] = Value<kCodebook>(b, Slice<kBits, 0>(v));
            if constexpr (G::kSlots >= 2) q[1] = Value<kCodebook>(b, Slice<kBits, 1>(v));
            if constexpr (G::kSlots >= 4) {
              q[2] = Value<kCodebook>(b, Slice<kBits, 2>(v));
              q[3] = Value<kCodebook>(b, Slice<kBits, 3>(v));
            }
            HWY_UNROLL(4)
            for (int t = 0; t < G::kSlots; ++t) acc[c][t & 1] = hn::MulAdd(va[t], q[t], acc[c][t & 1]);
          }
        }
      }
    } else {  // a block inside one group: slices [slot0, slot0 + bs / 16)
      const int64_t byte0 = (e_begin / G::kValues) * 16;
      const int slot0 = static_cast<int>((e_begin % G::kValues) / 16);
      for (int t = 0; t < bs / 16; ++t) {
        HWY_UNROLL(16)
        for (int64_t l = 0; l < 16; l += kLanes) {
          const auto va = hn::LoadU(df, a + e_begin + 16 * t + l);
          HWY_UNROLL(4)
          for (int c = 0; c < kCols; ++c) {
            const auto v = hn::PromoteTo(di, hn::LoadU(du8, col[c] + byte0 + l));
            // One chain per column here: a run-time index into acc put every accumulator of the
            // function on the stack (a 4-bit M = 1 MatMul 25% slower).
            acc[c][0] = hn::MulAdd(va, Value<kCodebook>(b, SliceAt<kBits>(v, slot0 + t)), acc[c][0]);
          }
        }
      }
    }
    HWY_UNROLL(4)
    for (int c = 0; c < kCols; ++c) {
      total[c] = hn::MulAdd(hn::Add(acc[c][0], acc[c][1]), hn::Set(df, sc[c][blk]), total[c]);
    }
  }
  for (int c = 0; c < kCols; ++c) y[c] = hn::GetLane(hn::SumOfLanes(df, total[c])) - ZeroCorrection(b, j + c, block_sums);
}

template <int kBits, bool kCodebook>
void RowColumns(const PackedNBits& b, const float* a, const float* block_sums, int64_t j0, int64_t j1, float* y) {
  int64_t j = j0;
  for (; j + 4 <= j1; j += 4) Columns<4, kBits, kCodebook>(b, a, block_sums, j, y + j - j0);
  for (; j < j1; ++j) Columns<1, kBits, kCodebook>(b, a, block_sums, j, y + j - j0);
}

void Row(const PackedNBits& b, const float* a, const float* block_sums, int64_t j0, int64_t j1, float* y) {
  if (!b.codebook.empty()) return RowColumns<4, true>(b, a, block_sums, j0, j1, y);
  if (b.bits == 8) return RowColumns<8, false>(b, a, block_sums, j0, j1, y);
  if (b.bits == 2) return RowColumns<2, false>(b, a, block_sums, j0, j1, y);
  RowColumns<4, false>(b, a, block_sums, j0, j1, y);
}

// Four rows of A (a holds them kPadRows apart by lda floats, zeros past k) by kCols columns from
// j into y (row stride ldy; rows past `rows` are not stored). For a few rows (a short prompt):
// each slice of B is widened, scaled and shifted by its zero point (q * s - s * z) once and
// serves every row, where the one-row kernel would read and decode all of B again per row, and
// the GEMM path writes all of B out as floats first (2.3x the one-row time at M = 4).
constexpr int kPadRows = 4;

template <int kCols, int kBits, bool kCodebook>
void FourRowColumns(const PackedNBits& b, const float* a, int64_t lda, int64_t rows, int64_t j, float* y,
                    int64_t ldy) {
  using G = Groups<kBits>;
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, DF> du8;
  constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(DF()));
  const ColumnRefs<kCols> refs(b, j);
  const auto& col = refs.col;
  const auto& sc = refs.sc;
  hn::Vec<DF> acc[kCols][kPadRows];
  HWY_UNROLL(4)
  for (int c = 0; c < kCols; ++c) {
    HWY_UNROLL(4)
    for (int r = 0; r < kPadRows; ++r) acc[c][r] = hn::Zero(df);
  }
  const int64_t bs = b.block_size;
  for (int64_t blk = 0; blk < b.blocks; ++blk) {
    hn::Vec<DF> vs[kCols], vz[kCols];
    HWY_UNROLL(4)
    for (int c = 0; c < kCols; ++c) {
      vs[c] = hn::Set(df, sc[c][blk]);
      vz[c] = hn::Set(df, b.scaled_zero_at(j + c, blk));
    }
    for (int64_t e = blk * bs; e < (blk + 1) * bs; e += 16) {  // one slice: 16 values in one block
      const uint64_t ue = static_cast<uint64_t>(e);
      const int64_t byte0 = static_cast<int64_t>(ue / G::kValues * 16);
      const int slot = static_cast<int>(ue % G::kValues / 16);
      HWY_UNROLL(16)
      for (int64_t l = 0; l < 16; l += kLanes) {
        HWY_UNROLL(4)
        for (int c = 0; c < kCols; ++c) {
          const auto v = hn::PromoteTo(di, hn::LoadU(du8, col[c] + byte0 + l));
          const auto q = hn::MulSub(Value<kCodebook>(b, SliceAt<kBits>(v, slot)), vs[c], vz[c]);
          HWY_UNROLL(4)
          for (int r = 0; r < kPadRows; ++r) acc[c][r] = hn::MulAdd(hn::LoadU(df, a + r * lda + e + l), q, acc[c][r]);
        }
      }
    }
  }
  for (int r = 0; r < kPadRows && r < rows; ++r) {
    for (int c = 0; c < kCols; ++c) y[r * ldy + c] = hn::GetLane(hn::SumOfLanes(df, acc[c][r]));
  }
}

template <int kBits, bool kCodebook>
void FourRowsOf(const PackedNBits& b, const float* a, int64_t lda, int64_t rows, int64_t j0, int64_t j1, float* y,
                int64_t ldy) {
  int64_t j = j0;
  for (; j + 4 <= j1; j += 4) FourRowColumns<4, kBits, kCodebook>(b, a, lda, rows, j, y + j, ldy);
  for (; j < j1; ++j) FourRowColumns<1, kBits, kCodebook>(b, a, lda, rows, j, y + j, ldy);
}

void FourRows(const PackedNBits& b, const float* a, int64_t lda, int64_t rows, int64_t j0, int64_t j1, float* y,
              int64_t ldy) {
  if (!b.codebook.empty()) return FourRowsOf<4, true>(b, a, lda, rows, j0, j1, y, ldy);
  if (b.bits == 8) return FourRowsOf<8, false>(b, a, lda, rows, j0, j1, y, ldy);
  if (b.bits == 2) return FourRowsOf<2, false>(b, a, lda, rows, j0, j1, y, ldy);
  FourRowsOf<4, false>(b, a, lda, rows, j0, j1, y, ldy);
}

// Values [e0, e1) of column j (float layout) dequantized into out[0, e1 - e0): 16 at a time from
// a slice (a block holds whole slices: block sizes are powers of two from 16), one at a time at
// unaligned ends. For the GEMM's panels of several rows of A.
template <int kBits, bool kCodebook>
void DecodeColumn(const PackedNBits& b, int64_t j, int64_t e0, int64_t e1, float* out) {
  using G = Groups<kBits>;
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, DF> du8;
  constexpr int64_t kLanes = static_cast<int64_t>(hn::MaxLanes(DF()));
  const uint8_t* col = b.column(j);
  const float* s = b.scales.data() + j * b.blocks;
  const auto one = [&](int64_t e) {
    const uint8_t byte = col[(e / G::kValues) * 16 + (e % 16)];
    const int q = (byte >> (((e % G::kValues) / 16) * kBits)) & ((1 << kBits) - 1);
    const int64_t blk = e / b.block_size;
    const float value = kCodebook ? b.codebook[q] : static_cast<float>(q);
    return value * s[blk] - b.scaled_zero_at(j, blk);
  };
  int64_t e = e0;
  for (; e < e1 && e % 16 != 0; ++e) out[e - e0] = one(e);
  for (; e + 16 <= e1; e += 16) {
    const int64_t blk = e / b.block_size;
    const auto vs = hn::Set(df, s[blk]), vz = hn::Set(df, b.scaled_zero_at(j, blk));
    const uint64_t ue = static_cast<uint64_t>(e);  // e >= 0: shifts and masks, not signed division
    const uint8_t* src = col + (ue / G::kValues) * 16;
    const int slot = static_cast<int>((ue % G::kValues) / 16);
    for (int64_t l = 0; l < 16; l += kLanes) {
      const auto v = hn::PromoteTo(di, hn::LoadU(du8, src + l));
      hn::StoreU(hn::MulSub(Value<kCodebook>(b, SliceAt<kBits>(v, slot)), vs, vz), df, out + (e - e0) + l);
    }
  }
  for (; e < e1; ++e) out[e - e0] = one(e);
}

void DecodeColumnImpl(const PackedNBits& b, int64_t j, int64_t e0, int64_t e1, float* out) {
  if (!b.codebook.empty()) return DecodeColumn<4, true>(b, j, e0, e1, out);
  if (b.bits == 8) return DecodeColumn<8, false>(b, j, e0, e1, out);
  if (b.bits == 2) return DecodeColumn<2, false>(b, j, e0, e1, out);
  DecodeColumn<4, false>(b, j, e0, e1, out);
}

// Rows [k0, k0 + kc) of columns [j0, j0 + cols) dequantized straight into the GEMM's strips
// (PackBlock's layout: strip t's row kk at dst + (t * kc + kk) * nr, zeros past `cols`), for the
// products of several rows of A. One gather of a 32-bit word per column of a vector of columns
// brings 4 consecutive values of every slice of a group: each shift and mask of it is then one
// row of the strips, so nothing is transposed. Decoding column by column and transposing through
// a scratch took 77% of an M = 4, K = N = 4096 product (perf), 2.6x ONNX Runtime's time. Needs
// k0 and kc in whole groups and nr in whole vectors; returns false otherwise.
template <int kBits, bool kCodebook>
bool PanelStrips(const PackedNBits& b, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) {
  using G = Groups<kBits>;
  const DF df;
  const hn::RebindToSigned<DF> di;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  if (k0 % G::kValues != 0 || kc % G::kValues != 0 || nr % lanes != 0) return false;
  // The float layout's column bytes are whole 16-byte groups: whole 32-bit words.
  const int32_t* words = reinterpret_cast<const int32_t*>(b.q.data());
  const int32_t column_words = static_cast<int32_t>(b.column_bytes() / 4);
  const int32_t blocks = static_cast<int32_t>(b.blocks);
  const auto code_mask = hn::Set(di, (1 << kBits) - 1);
  const int64_t width = (cols + nr - 1) / nr * nr;
  for (int64_t c0 = 0; c0 < width; c0 += lanes) {
    float* out = dst + (c0 / nr) * kc * nr + (c0 % nr);
    if (c0 >= cols) {  // the last strip's padding
      for (int64_t kk = 0; kk < kc; ++kk) hn::StoreU(hn::Zero(df), df, out + kk * nr);
      continue;
    }
    const int64_t live = std::min(lanes, cols - c0);
    const auto keep = hn::FirstN(df, static_cast<size_t>(live));
    // Lanes past `cols` read the last column again and store zeros.
    const auto j = hn::Min(hn::Iota(di, static_cast<int32_t>(j0 + c0)), hn::Set(di, static_cast<int32_t>(j0 + cols - 1)));
    HWY_ALIGN int32_t column[hn::MaxLanes(DF())];
    hn::Store(j, di, column);
    const auto first_word = hn::Mul(j, hn::Set(di, column_words));
    const auto first_block = hn::Mul(j, hn::Set(di, blocks));
    int64_t block = -1;
    hn::Vec<DF> scale = hn::Zero(df), zero = hn::Zero(df);
    for (int64_t e = k0; e < k0 + kc; e += G::kValues) {
      // Each slice's scale and zero (a slice lies in one block: blocks are 16 values or more).
      hn::Vec<DF> slot_scale[G::kSlots], slot_zero[G::kSlots];
      HWY_UNROLL(4)
      for (int slot = 0; slot < G::kSlots; ++slot) {
        const int64_t blk = (e + 16 * slot) / b.block_size;
        if (blk != block) {
          block = blk;
          const auto at = hn::Add(first_block, hn::Set(di, static_cast<int32_t>(block)));
          scale = hn::GatherIndex(df, b.scales.data(), at);
          HWY_ALIGN float zeros[hn::MaxLanes(DF())];
          for (int64_t l = 0; l < lanes; ++l) zeros[l] = b.scaled_zero_at(column[l], block);
          zero = hn::Load(df, zeros);
        }
        slot_scale[slot] = scale;
        slot_zero[slot] = zero;
      }
      // The group's 16 bytes of each column as 4 words: independent gathers, each read once for
      // every slice (gathered again per slice, the gathers' latency was most of the time).
      const int32_t group_word = static_cast<int32_t>(e / G::kValues * 4);
      hn::Vec<decltype(di)> word[4];
      HWY_UNROLL(4)
      for (int w = 0; w < 4; ++w) word[w] = hn::GatherIndex(di, words, hn::Add(first_word, hn::Set(di, group_word + w)));
      HWY_UNROLL(4)
      for (int slot = 0; slot < G::kSlots; ++slot) {
        float* rows = out + (e + 16 * slot - k0) * nr;
        HWY_UNROLL(4)
        for (int w = 0; w < 4; ++w) {
          HWY_UNROLL(4)
          for (int i = 0; i < 4; ++i) {
            const auto code = hn::And(hn::ShiftRightSame(word[w], 8 * i + slot * kBits), code_mask);
            const auto value = hn::MulSub(Value<kCodebook>(b, code), slot_scale[slot], slot_zero[slot]);
            hn::StoreU(live == lanes ? value : hn::IfThenElseZero(keep, value), df, rows + (4 * w + i) * nr);
          }
        }
      }
    }
  }
  return true;
}

bool PanelStripsImpl(const PackedNBits& b, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) {
  if (!b.codebook.empty()) return PanelStrips<4, true>(b, k0, kc, j0, cols, nr, dst);
  if (b.bits == 8) return PanelStrips<8, false>(b, k0, kc, j0, cols, nr, dst);
  if (b.bits == 2) return PanelStrips<2, false>(b, k0, kc, j0, cols, nr, dst);
  return PanelStrips<4, false>(b, k0, kc, j0, cols, nr, dst);
}

// How a panel's zero points come off: one integer for all of B (z times the block's sum of A, a
// broadcast), integer bytes per column (a widening load and a multiply per block), or float
// (scale * z times scale_a * sum(a), an FMA per block).
enum ZeroKind { kUniformZero, kByteZeros, kFloatZeros };

inline int32_t Load4(const int8_t* p) {
  int32_t v;
  std::memcpy(&v, p, 4);
  return v;
}

// Software prefetch, 4 KiB ahead in B and 4 blocks ahead in its scales (separate streams). With B
// from memory, as a decoder's weights are (8 layers of K = N = 4096, 85 MB > L3, M = 1), the
// hardware prefetcher alone took 6.2-8.8 ms against 3.1-5.2 with these (alternated rounds, loaded
// machine); from L3 about 6% faster; 8 KiB ahead was no better.
constexpr int64_t kPrefetchBytes = 4096, kPrefetchBlocks = 4;

#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
#define ONNXFLOW_NBITS_VNNI_ATTR                                                                      \
  __attribute__((target("avx512f,avx512vl,avx512dq,avx512bw,avx512vnni,avx2,fma,bmi,bmi2,f16c,popcnt," \
                        "lzcnt,sse4.2")))

bool Int8KernelImpl(int bits) {
  (void)bits;  // 4 and 8
  static const bool vnni = __builtin_cpu_supports("avx512vnni");
  return vnni;
}

// Per row and block of A: max|a| / 127, the values times 127 / max|a| (that inverse, not 1 / scale:
// the two differ in the last bit and flip roundings) rounded half to even, as ONNX Runtime's
// QuantizeARow_CompInt8 does, so that both runtimes multiply the same int8 values.
ONNXFLOW_NBITS_VNNI_ATTR void QuantizeRowsImpl(const PackedNBits& b, const float* a, int64_t m, NBitsQuantA* qa) {
  const int64_t kp = b.k_padded, bs = b.block_size;
  qa->q.resize(m * kp);
  qa->scale.resize(m * b.blocks);
  qa->corr.resize(m * b.blocks);
  qa->sum.resize(m * b.blocks);
  const __m512 abs_mask = _mm512_castsi512_ps(_mm512_set1_epi32(0x7fffffff));
  for (int64_t i = 0; i < m; ++i) {
    const float* row = a + i * b.k;
    for (int64_t blk = 0; blk < b.blocks; ++blk) {
      const int64_t e0 = blk * bs;
      __m512 amax = _mm512_setzero_ps();
      for (int64_t e = e0; e < e0 + bs; e += 16) {
        const int64_t left = std::min<int64_t>(16, std::max<int64_t>(0, b.k - e));
        const __mmask16 valid = static_cast<__mmask16>((1u << left) - 1);
        amax = _mm512_max_ps(amax, _mm512_and_ps(_mm512_maskz_loadu_ps(valid, row + std::min(e, b.k)), abs_mask));
      }
      const float mx = _mm512_reduce_max_ps(amax);
      const float scale = mx / 127.f, inv = mx != 0.f ? 127.f / mx : 0.f;
      const __m512 vinv = _mm512_set1_ps(inv);
      __m512i sum = _mm512_setzero_si512();
      int8_t* dst = qa->q.data() + i * kp;
      for (int64_t e = e0; e < e0 + bs; e += 16) {
        const int64_t left = std::min<int64_t>(16, std::max<int64_t>(0, b.k - e));
        const __mmask16 valid = static_cast<__mmask16>((1u << left) - 1);
        const __m512 v = _mm512_mul_ps(_mm512_maskz_loadu_ps(valid, row + std::min(e, b.k)), vinv);
        const __m512i q = _mm512_cvtps_epi32(_mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
        sum = _mm512_add_epi32(sum, q);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + e), _mm512_cvtepi32_epi8(q));
      }
      const int32_t s = _mm512_reduce_add_epi32(sum);
      qa->scale[i * b.blocks + blk] = scale;
      qa->sum[i * b.blocks + blk] = s;
      qa->corr[i * b.blocks + blk] = scale * static_cast<float>(s);
    }
  }
}

// kRows rows of A by one panel of kVecs vectors of 16 columns. Per 8 values of K and vector, 4-bit
// B: one 64-byte load, two ANDs (the high nibbles stay in place, 16 times their value: their sum
// is shifted down once per block, which is exact), two vpdpbusd per row with 4 values of A
// broadcast; 8-bit B (kEight): two 64-byte loads of whole bytes, the same two vpdpbusd. The two
// halves have accumulators of their own: 2 * kVecs independent chains per row.
template <int kVecs, int kRows, int kZero, bool kEight>
ONNXFLOW_NBITS_VNNI_ATTR HWY_NOINLINE void PanelInt8(const PackedNBits& b, const NBitsQuantA& qa, int64_t i0,
                                                     int64_t p, const float* bias, float* y) {
  constexpr int64_t kCols = kVecs * 16;
  constexpr int64_t kLines = kEight ? 2 : 1;  // 64-byte lines per vector and 8 values of K
  const int64_t steps = b.block_size / 8, kp = b.k_padded, n = b.n;
  const uint8_t* bq = b.q.data() + b.panel_q(p);
  const float* sc = b.scales.data() + b.panel_blocks(p);
  const uint8_t* zb = kZero == kByteZeros ? b.zero_bytes.data() + b.panel_blocks(p) : nullptr;
  const float* sz = kZero == kFloatZeros ? b.scaled_zero.data() + b.panel_blocks(p) : nullptr;
  const __m512i lo_mask = _mm512_set1_epi8(0x0F), hi_mask = _mm512_set1_epi8(static_cast<char>(0xF0));
  const int64_t j0 = p * PackedNBits::kPanelVecs * 16;
  __mmask16 store_mask[kVecs];
  __m512 total[kRows][kVecs];
#pragma GCC unroll 4
  for (int v = 0; v < kVecs; ++v) {
    const int64_t left = std::min<int64_t>(16, n - (j0 + 16 * v));
    store_mask[v] = static_cast<__mmask16>((1u << left) - 1);
    const __m512 bv = bias != nullptr ? _mm512_maskz_loadu_ps(store_mask[v], bias + j0 + 16 * v) : _mm512_setzero_ps();
#pragma GCC unroll 2
    for (int r = 0; r < kRows; ++r) total[r][v] = bv;
  }
  const int8_t* arow[kRows];
#pragma GCC unroll 2
  for (int r = 0; r < kRows; ++r) arow[r] = qa.q.data() + (i0 + r) * kp;
  for (int64_t blk = 0; blk < b.blocks; ++blk) {
    __m512i lo[kRows][kVecs], hi[kRows][kVecs];
#pragma GCC unroll 2
    for (int r = 0; r < kRows; ++r) {
      const int32_t asum = qa.sum[(i0 + r) * b.blocks + blk];
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) {
        hi[r][v] = _mm512_setzero_si512();
        if (kZero == kUniformZero) {
          lo[r][v] = _mm512_set1_epi32(-b.uniform_zero * asum);
        } else if (kZero == kByteZeros) {
          const __m512i z = _mm512_cvtepu8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(zb + blk * kCols + 16 * v)));
          lo[r][v] = _mm512_mullo_epi32(z, _mm512_set1_epi32(-asum));
        } else {
          lo[r][v] = _mm512_setzero_si512();
        }
      }
    }
    const uint8_t* bb = bq + blk * steps * kCols * 4 * kLines;
    for (int64_t t = 0; t < steps; ++t) {
      __m512i a_lo[kRows], a_hi[kRows];
#pragma GCC unroll 2
      for (int r = 0; r < kRows; ++r) {
        const int8_t* ap = arow[r] + blk * b.block_size + 8 * t;
        a_lo[r] = _mm512_set1_epi32(Load4(ap));
        a_hi[r] = _mm512_set1_epi32(Load4(ap + 4));
      }
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) {
        const uint8_t* line = bb + (t * kVecs + v) * 64 * kLines;
        _mm_prefetch(reinterpret_cast<const char*>(line + kPrefetchBytes), _MM_HINT_T0);
        __m512i l, h;
        if constexpr (kEight) {
          _mm_prefetch(reinterpret_cast<const char*>(line + 64 + kPrefetchBytes), _MM_HINT_T0);
          l = _mm512_loadu_si512(line);
          h = _mm512_loadu_si512(line + 64);
        } else {
          const __m512i raw = _mm512_loadu_si512(line);
          l = _mm512_and_si512(raw, lo_mask);
          h = _mm512_and_si512(raw, hi_mask);
        }
#pragma GCC unroll 2
        for (int r = 0; r < kRows; ++r) {
          lo[r][v] = _mm512_dpbusd_epi32(lo[r][v], l, a_lo[r]);
          hi[r][v] = _mm512_dpbusd_epi32(hi[r][v], h, a_hi[r]);
        }
      }
    }
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) {
      _mm_prefetch(reinterpret_cast<const char*>(sc + (blk + kPrefetchBlocks) * kCols + 16 * v), _MM_HINT_T0);
      const __m512 s = _mm512_loadu_ps(sc + blk * kCols + 16 * v);
#pragma GCC unroll 2
      for (int r = 0; r < kRows; ++r) {
        const __m512i dot = _mm512_add_epi32(lo[r][v], kEight ? hi[r][v] : _mm512_srai_epi32(hi[r][v], 4));
        const __m512 sa = _mm512_set1_ps(qa.scale[(i0 + r) * b.blocks + blk]);
        total[r][v] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(dot), _mm512_mul_ps(s, sa), total[r][v]);
        if (kZero == kFloatZeros) {
          total[r][v] = _mm512_fnmadd_ps(_mm512_loadu_ps(sz + blk * kCols + 16 * v),
                                         _mm512_set1_ps(qa.corr[(i0 + r) * b.blocks + blk]), total[r][v]);
        }
      }
    }
  }
#pragma GCC unroll 2
  for (int r = 0; r < kRows; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < kVecs; ++v) _mm512_mask_storeu_ps(y + (i0 + r) * n + j0 + 16 * v, store_mask[v], total[r][v]);
  }
}

template <int kRows, int kZero, bool kEight>
void PanelInt8Vecs(int64_t vecs, const PackedNBits& b, const NBitsQuantA& qa, int64_t i0, int64_t p,
                   const float* bias, float* y) {
  switch (vecs) {
    case 4: return PanelInt8<4, kRows, kZero, kEight>(b, qa, i0, p, bias, y);
    case 3: return PanelInt8<3, kRows, kZero, kEight>(b, qa, i0, p, bias, y);
    case 2: return PanelInt8<2, kRows, kZero, kEight>(b, qa, i0, p, bias, y);
    default: return PanelInt8<1, kRows, kZero, kEight>(b, qa, i0, p, bias, y);
  }
}

template <int kZero, bool kEight>
void Int8Panels(const PackedNBits& b, const NBitsQuantA& qa, int64_t m, int64_t p0, int64_t p1, const float* bias,
                float* y) {
  // Panels outside, rows inside: a panel (64 columns, 32 KiB at K = 1024) stays in L2 for every
  // pair of rows.
  for (int64_t p = p0; p < p1; ++p) {
    const int64_t vecs = b.panel_vecs(p);
    int64_t i = 0;
    for (; i + 2 <= m; i += 2) PanelInt8Vecs<2, kZero, kEight>(vecs, b, qa, i, p, bias, y);
    if (i < m) PanelInt8Vecs<1, kZero, kEight>(vecs, b, qa, i, p, bias, y);
  }
}

template <bool kEight>
void Int8Zeros(const PackedNBits& b, const NBitsQuantA& qa, int64_t m, int64_t p0, int64_t p1, const float* bias,
               float* y) {
  if (b.uniform_zero >= 0) return Int8Panels<kUniformZero, kEight>(b, qa, m, p0, p1, bias, y);
  if (!b.zero_bytes.empty()) return Int8Panels<kByteZeros, kEight>(b, qa, m, p0, p1, bias, y);
  Int8Panels<kFloatZeros, kEight>(b, qa, m, p0, p1, bias, y);
}

void Int8Impl(const PackedNBits& b, const NBitsQuantA& qa, int64_t m, int64_t p0, int64_t p1, const float* bias,
              float* y) {
  if (b.bits == 8) return Int8Zeros<true>(b, qa, m, p0, p1, bias, y);
  Int8Zeros<false>(b, qa, m, p0, p1, bias, y);
}
#elif HWY_TARGET == HWY_AVX2
// AVX2 has no vpdpbusd: vpmaddubsw multiplies the 4-bit weights (unsigned, 0..15) by A's int8 values
// and sums pairs into int16, and vpmaddwd by ones sums those into int32. A pair is at most
// 2 * 15 * 127 and the low and high nibbles' pairs added together 4 * 15 * 127 = 7620: nothing
// saturates, so the sums are the VNNI kernel's exactly. 8-bit weights would saturate (2 * 255 *
// 127): they stay on the float path here. Without it, accuracy_level 4 ran in float on AVX2, 1.1-1.6x
// ONNX Runtime's int8 time on a decoder's 4096 x 4096 step (Zen 3).
bool Int8KernelImpl(int bits) { return bits == 4; }

// As the VNNI target's QuantizeRowsImpl, in scalar code: the same products (x * (127 / max|a|)),
// rounded half to even (the default rounding mode), so the same int8 values as ONNX Runtime.
void QuantizeRowsImpl(const PackedNBits& b, const float* a, int64_t m, NBitsQuantA* qa) {
  const int64_t kp = b.k_padded, bs = b.block_size;
  qa->q.resize(m * kp);
  qa->scale.resize(m * b.blocks);
  qa->corr.resize(m * b.blocks);
  qa->sum.resize(m * b.blocks);
  for (int64_t i = 0; i < m; ++i) {
    const float* row = a + i * b.k;
    int8_t* dst = qa->q.data() + i * kp;
    for (int64_t blk = 0; blk < b.blocks; ++blk) {
      const int64_t e0 = blk * bs, e1 = std::min(e0 + bs, b.k);
      float mx = 0.f;
      for (int64_t e = e0; e < e1; ++e) mx = std::max(mx, std::fabs(row[e]));
      const float scale = mx / 127.f, inv = mx != 0.f ? 127.f / mx : 0.f;
      int32_t sum = 0;
      for (int64_t e = e0; e < e0 + bs; ++e) {
        const int32_t q = e < e1 ? static_cast<int32_t>(std::nearbyint(row[e] * inv)) : 0;
        sum += q;
        dst[e] = static_cast<int8_t>(q);
      }
      qa->scale[i * b.blocks + blk] = scale;
      qa->sum[i * b.blocks + blk] = sum;
      qa->corr[i * b.blocks + blk] = scale * static_cast<float>(sum);
    }
  }
}

// One row of A by one panel of kVecs vectors of 16 columns (the VNNI layout: per 8 values of K and
// vector, a 64-byte line, byte e of column j holding K values e and 4 + e in its nibbles), as two
// 8-column halves a vector. The epilogue is the VNNI kernel's, operation for operation.
template <int kVecs, int kZero>
HWY_NOINLINE void PanelInt8Avx2(const PackedNBits& b, const NBitsQuantA& qa, int64_t i, int64_t p, const float* bias,
                                float* y) {
  constexpr int64_t kCols = kVecs * 16;
  constexpr int kHalves = 2 * kVecs;
  const int64_t steps = b.block_size / 8, kp = b.k_padded, n = b.n;
  const uint8_t* bq = b.q.data() + b.panel_q(p);
  const float* sc = b.scales.data() + b.panel_blocks(p);
  const uint8_t* zb = kZero == kByteZeros ? b.zero_bytes.data() + b.panel_blocks(p) : nullptr;
  const float* sz = kZero == kFloatZeros ? b.scaled_zero.data() + b.panel_blocks(p) : nullptr;
  const __m256i nibble = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  const int64_t j0 = p * PackedNBits::kPanelVecs * 16;
  __m256i store_mask[kHalves];
  __m256 total[kHalves];
  for (int h = 0; h < kHalves; ++h) {
    const int64_t left = std::clamp<int64_t>(n - (j0 + 8 * h), 0, 8);
    store_mask[h] = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int32_t>(left)), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    total[h] = bias != nullptr ? _mm256_maskload_ps(bias + j0 + 8 * h, store_mask[h]) : _mm256_setzero_ps();
  }
  const int8_t* arow = qa.q.data() + i * kp;
  for (int64_t blk = 0; blk < b.blocks; ++blk) {
    const int32_t asum = qa.sum[i * b.blocks + blk];
    __m256i acc[kHalves];
#pragma GCC unroll 8
    for (int h = 0; h < kHalves; ++h) {
      if (kZero == kUniformZero) {
        acc[h] = _mm256_set1_epi32(-b.uniform_zero * asum);
      } else if (kZero == kByteZeros) {
        const __m256i z = _mm256_cvtepu8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(zb + blk * kCols + 8 * h)));
        acc[h] = _mm256_mullo_epi32(z, _mm256_set1_epi32(-asum));
      } else {
        acc[h] = _mm256_setzero_si256();
      }
    }
    const uint8_t* bb = bq + blk * steps * kCols * 4;
    for (int64_t t = 0; t < steps; ++t) {
      const int8_t* ap = arow + blk * b.block_size + 8 * t;
      const __m256i a_lo = _mm256_set1_epi32(Load4(ap)), a_hi = _mm256_set1_epi32(Load4(ap + 4));
#pragma GCC unroll 4
      for (int v = 0; v < kVecs; ++v) {
        const uint8_t* line = bb + (t * kVecs + v) * 64;
        _mm_prefetch(reinterpret_cast<const char*>(line + kPrefetchBytes), _MM_HINT_T0);
#pragma GCC unroll 2
        for (int half = 0; half < 2; ++half) {
          const __m256i raw = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(line + 32 * half));
          const __m256i lo = _mm256_and_si256(raw, nibble);
          const __m256i hi = _mm256_and_si256(_mm256_srli_epi16(raw, 4), nibble);
          const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(lo, a_lo), _mm256_maddubs_epi16(hi, a_hi));
          acc[2 * v + half] = _mm256_add_epi32(acc[2 * v + half], _mm256_madd_epi16(pairs, ones));
        }
      }
    }
    const __m256 sa = _mm256_set1_ps(qa.scale[i * b.blocks + blk]);
#pragma GCC unroll 8
    for (int h = 0; h < kHalves; ++h) {
      const __m256 s = _mm256_loadu_ps(sc + blk * kCols + 8 * h);
      total[h] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(acc[h]), _mm256_mul_ps(s, sa), total[h]);
      if (kZero == kFloatZeros) {
        total[h] = _mm256_fnmadd_ps(_mm256_loadu_ps(sz + blk * kCols + 8 * h),
                                    _mm256_set1_ps(qa.corr[i * b.blocks + blk]), total[h]);
      }
    }
  }
  for (int h = 0; h < kHalves; ++h) _mm256_maskstore_ps(y + i * n + j0 + 8 * h, store_mask[h], total[h]);
}

template <int kZero>
void Int8PanelsAvx2(const PackedNBits& b, const NBitsQuantA& qa, int64_t m, int64_t p0, int64_t p1, const float* bias,
                    float* y) {
  // Panels outside, rows inside: a panel stays in L2 for every row.
  for (int64_t p = p0; p < p1; ++p) {
    for (int64_t i = 0; i < m; ++i) {
      switch (b.panel_vecs(p)) {
        case 4: PanelInt8Avx2<4, kZero>(b, qa, i, p, bias, y); break;
        case 3: PanelInt8Avx2<3, kZero>(b, qa, i, p, bias, y); break;
        case 2: PanelInt8Avx2<2, kZero>(b, qa, i, p, bias, y); break;
        default: PanelInt8Avx2<1, kZero>(b, qa, i, p, bias, y); break;
      }
    }
  }
}

void Int8Impl(const PackedNBits& b, const NBitsQuantA& qa, int64_t m, int64_t p0, int64_t p1, const float* bias,
              float* y) {
  if (b.uniform_zero >= 0) return Int8PanelsAvx2<kUniformZero>(b, qa, m, p0, p1, bias, y);
  if (!b.zero_bytes.empty()) return Int8PanelsAvx2<kByteZeros>(b, qa, m, p0, p1, bias, y);
  Int8PanelsAvx2<kFloatZeros>(b, qa, m, p0, p1, bias, y);
}
#else
// Other targets compute accuracy_level 4 in float: these are never called (Int8KernelImpl is false).
bool Int8KernelImpl(int) { return false; }
void QuantizeRowsImpl(const PackedNBits&, const float*, int64_t, NBitsQuantA*) {}
void Int8Impl(const PackedNBits&, const NBitsQuantA&, int64_t, int64_t, int64_t, const float*, float*) {}
#endif  // HWY_TARGET

}  // namespace HWY_NAMESPACE
}  // namespace quant_ms
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
