// com.microsoft MatMulNBits with bits 2, 4 or 8: Y = A * dequantize(B)^T (+ bias), B given as N
// rows of K values in blocks of block_size with one scale (and zero point, default 2^(bits - 1))
// per block; and
// MatMulBnb4, whose 4-bit codes index a 16-value codebook (FP4 or NF4) times the block's absmax.
//
// The 4-bit weights stay 4-bit in memory, repacked once at load into the layout of the kernel
// that will read them (one of two, so B is held once):
//
// - Float (accuracy_level 0-3, a CPU without AVX-512 VNNI, or 2-bit B): per column in groups
//   of 16 bytes holding 8 / bits slices of 16 consecutive values, slice s in bits [s * bits,
//   (s + 1) * bits) of every byte (4 bits: byte j holds value j in its low nibble and value
//   j + 16 in its high one), so one 16-byte load widened to 32-bit lanes gives 16 consecutive
//   values per slice with a shift and an AND. Dequantization is folded out of the inner loop:
//   with w = q * s - s * z,
//     y[n] = sum_b s[n,b] * dot(a_b, q_b) - sum_b (s * z)[n,b] * sum(a_b).
//
// - Int8 (accuracy_level 4 on AVX-512 VNNI, and 4-bit B on AVX2): A is quantized to int8 per block as ONNX Runtime's
//   CompInt8 does, and one 32-bit lane is one column: per 8 values of K, a 64-byte vector holds
//   16 columns, byte i of a lane value i in its low nibble and value 4 + i in its high one (8-bit
//   B: two such vectors, values 0-3 a byte each in the first, 4-7 in the second). Then
//   one vpdpbusd multiplies 16 columns by 4 values of A broadcast to every lane, and the block's
//   scales and zero points are one vector load each (16 columns), applied once per block in
//   registers. Columns come in panels of 4 such vectors (64 columns) interleaved per 8 values,
//   so a panel is one sequential stream; the last panel may hold fewer vectors (N rounded to 16).
//   (The former layout spread each column's quad of groups over the lanes: per 128 products it
//   spent a masked load and a permute on the scales and another pair on the zero points, and ran
//   at 1.5x ONNX Runtime's time at M = 1.)
#pragma once

#include <cstdint>
#include <vector>

#include "ops/math/gemm.h"

namespace onnxflow {
namespace quant_ms {

// Rows of A from which the GEMM's dequantized panels pay off against the four-row kernel (K = N =
// 4096, 1 thread, ms, four-row against GEMM: M = 4 1.3 / 4.1, 8 3.1 / 4.7, 16 5.0 / 6.8, 32 9.6 /
// 8.6, 64 19.2 / 14.1).
inline constexpr int64_t kNBitsGemmRows = 32;

struct PackedNBits {
  int64_t k = 0, n = 0, block_size = 0, blocks = 0;
  int bits = 4;                  // 2, 4 or 8 (the int8 layout: 4 or 8)
  int64_t k_padded = 0;          // blocks * block_size
  bool int8 = false;             // the int8 layout (else the float one)
  std::vector<uint8_t> q;        // the weights in the layout above
  std::vector<float> scales;     // float: [n, blocks]; int8: per panel [blocks, panel columns]
  std::vector<float> scaled_zero;  // scale * zero point, laid out as `scales`, only for zero points that are
                                   // not whole bytes (float ones); else empty
  // Float layout: the 16 values the codes stand for (MatMulBnb4's FP4 and NF4, a value times its
  // block's scale), or empty: the code is the value.
  std::vector<float> codebook;
  // The zero point of every block (2^(bits - 1) when none are given), or -1; else, when all are
  // whole bytes, one byte per block laid out as `scales`; else neither (scaled_zero); none of the
  // three for MatMulBnb4 (no zero point). Kept as bytes rather than scale * zero in float: a
  // decoder step reads every block's once, and the float table was a sixth of what a 4-bit
  // model's step read from memory.
  int uniform_zero = -1;
  std::vector<uint8_t> zero_bytes;

  // Float layout: scale * zero point of column j's block blk (0 without zero points).
  float scaled_zero_at(int64_t j, int64_t blk) const {
    const int64_t i = j * blocks + blk;
    if (!scaled_zero.empty()) return scaled_zero[i];
    if (!zero_bytes.empty()) return scales[i] * static_cast<float>(zero_bytes[i]);
    return uniform_zero >= 0 ? scales[i] * static_cast<float>(uniform_zero) : 0.f;
  }

  // Float layout: the values of a 16-byte group, and the bytes of a column (whole groups).
  int64_t group_values() const { return 16 * (8 / bits); }
  int64_t column_bytes() const { return (k_padded + group_values() - 1) / group_values() * 16; }
  const uint8_t* column(int64_t j) const { return q.data() + j * column_bytes(); }
  // Int8 layout: per 8 values of K and vector of 16 columns, one 64-byte line (4 bits) or two
  // (8 bits: values 0-3 of each column in the first, 4-7 in the second, a byte each).
  static constexpr int64_t kPanelVecs = 4;
  int64_t line_bytes() const { return bits == 8 ? 128 : 64; }
  int64_t vecs() const { return (n + 15) / 16; }
  int64_t panels() const { return (vecs() + kPanelVecs - 1) / kPanelVecs; }
  int64_t panel_vecs(int64_t p) const { return vecs() - p * kPanelVecs < kPanelVecs ? vecs() - p * kPanelVecs : kPanelVecs; }
  // Offsets of panel p in q (bytes) and in the per-block arrays (elements).
  int64_t panel_q(int64_t p) const { return p * kPanelVecs * line_bytes() * (k_padded / 8); }
  int64_t panel_blocks(int64_t p) const { return p * kPanelVecs * 16 * blocks; }
};

// Where codes come from: MatMulNBits' B [N, blocks, block_size * bits / 8] (and QMoE's expert
// weights [N, K * bits / 8]: value e of column j in byte e * bits / 8 of its row, the lowest bits
// first), or MatMulBnb4's flat N x K 4-bit codes (element j * K + e, the high nibble first).
struct NBitsCodes {
  const uint8_t* data;
  int64_t row_bytes;  // bytes per column; 0: MatMulBnb4's flat layout
  int64_t k;
  int bits;
  int operator()(int64_t j, int64_t e) const {
    if (row_bytes > 0) {
      const int per = 8 / bits;
      const uint8_t byte = data[j * row_bytes + e / per];
      return (byte >> ((e % per) * bits)) & ((1 << bits) - 1);
    }
    const int64_t i = j * k + e;
    return (i & 1) ? data[i / 2] & 15 : data[i / 2] >> 4;
  }
};

// Writes the codes of columns [0, b->n) into b->q in the float layout (b's sizes already set; the
// padding past k stays code 0).
void PackFloatLayoutCodes(const NBitsCodes& codes, PackedNBits* b);

// Whether the int8 kernel runs here for `bits`-bit weights: AVX-512 with VNNI (4 and 8 bits), or
// AVX2 (4 bits: 8-bit weights would saturate its vpmaddubsw).
bool NBitsInt8Available(int bits);

// y[j] for columns [j0, j1) of one row of A (a holds k_padded floats, zero past k; block_sums holds
// the sum of each block of a): the float kernel.
void MatMulNBitsRow(const PackedNBits& b, const float* a, const float* block_sums, int64_t j0, int64_t j1, float* y);

// y[r * ldy + j] for r < min(rows, 4) and columns [j0, j1) of four rows of A (a holds 4 rows of
// k_padded floats lda apart, zeros past k and in rows past `rows`): the float kernel for a few rows.
void MatMulNBitsFourRows(const PackedNBits& b, const float* a, int64_t lda, int64_t rows, int64_t j0, int64_t j1,
                         float* y, int64_t ldy);

// A quantized for the int8 kernel: per row k_padded int8 values (zero past k) and per block the
// scale (max|a| / 127), the sum of the int8 values and scale * sum (for float zero points).
struct NBitsQuantA {
  std::vector<int8_t> q;
  std::vector<float> scale, corr;
  std::vector<int32_t> sum;
};
void QuantizeRowsForNBits(const PackedNBits& b, const float* a, int64_t m, NBitsQuantA* qa);
// Rows [0, m) of Y (ldy n) for the columns of panels [p0, p1), bias (may be null) added.
void MatMulNBitsInt8(const PackedNBits& b, const NBitsQuantA& qa, int64_t m, int64_t p0, int64_t p1,
                     const float* bias, float* y);

// Writes columns [j0, j0 + cols) of rows [k0, k0 + kc) of dequantize(B)^T (a K x N matrix) as
// GEMM strips of nr columns (ops/math/gemm.h's BPanelSource layout), zeros past column `cols`.
// The float layout only.
void DequantizeNBitsPanel(const PackedNBits& b, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr,
                          float* dst);

// B of a product over columns [offset, ...) of `b`, dequantized block by block into the GEMM's
// panels (ops/math/gemm.h) as the GEMM asks for them.
class NBitsPanelSource : public BPanelSource {
 public:
  explicit NBitsPanelSource(const PackedNBits& b, int64_t offset = 0) : b_(b), offset_(offset) {}
  void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const override {
    DequantizeNBitsPanel(b_, k0, kc, offset_ + j0, cols, nr, dst);
  }

 private:
  const PackedNBits& b_;
  int64_t offset_;
};

}  // namespace quant_ms
}  // namespace onnxflow
