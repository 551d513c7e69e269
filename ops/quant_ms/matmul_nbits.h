// com.microsoft MatMulNBits with bits = 4: Y = A * dequantize(B)^T (+ bias), B given as N rows of
// K 4-bit values in blocks of block_size with one scale (and zero point, default 8) per block.
//
// The 4-bit weights stay 4-bit in memory. At load they are repacked once per column in groups of
// 32 values: byte j of a group holds value j in its low nibble and value j + 16 in its high one,
// so one 16-byte load widened to 32-bit lanes gives 16 consecutive values with an AND and the next
// 16 with a shift (ONNX's order, value 2i low and 2i + 1 high, would need an interleave).
//
// Dequantization is folded out of the inner loop: with w = (q - z) * s = q * s - s * z,
//   y[n] = sum_b s[n,b] * dot(a_b, q_b) - sum_b (s * z)[n,b] * sum(a_b)
// so the loop is one FMA per value into a per-block accumulator, scaled once per block, and the
// zero points cost one dot product over blocks per column (block sums of A are taken once per row).
#pragma once

#include <cstdint>
#include <vector>

namespace onnxflow {
namespace quant_ms {

struct PackedNBits {
  int64_t k = 0, n = 0, block_size = 0, blocks = 0;
  int64_t k_padded = 0;            // blocks * block_size, a multiple of 16
  int64_t column_bytes = 0;        // k_padded rounded up to whole quads of groups (128 values), halved
  std::vector<uint8_t> q;          // n columns of column_bytes, in groups of 32 values
  std::vector<float> scales;       // [n, blocks]
  std::vector<float> scaled_zero;  // [n, blocks]: scale * zero point
  int uniform_zero = -1;           // the zero point of every block (8 when none are given), or -1
  std::vector<uint8_t> zero_bytes; // [n, blocks + 4]: integer zero points (empty when any is not)
  const uint8_t* column(int64_t j) const { return q.data() + j * column_bytes; }
};

// y[j] for columns [j0, j1) of one row of A (a holds k_padded floats, zero past k; block_sums holds
// the sum of each block of a): the SIMD kernel.
void MatMulNBitsRow(const PackedNBits& b, const float* a, const float* block_sums, int64_t j0, int64_t j1, float* y);

// accuracy_level 4 (A may be quantized to int8) on CPUs with AVX-512 VNNI: A is quantized per
// block (scale max|a| / 127, as ONNX Runtime's CompInt8 does) and each half of a quad of groups
// of B is one vpdpbusd of unsigned nibbles by signed bytes, 64 products per instruction.
struct Int8Row {
  std::vector<int8_t> q;             // k rounded to quads of groups, in the lane order of the kernel
  std::vector<float> lane_scales;    // 16 per quad: the A scale of the block each lane sums
  std::vector<int32_t> lane_sums;    // 16 per quad: the sum of the 8 A values each lane multiplies
  std::vector<float> block_corr;     // per block: a_scale * sum(q), for the zero points
  std::vector<float> block_scale;    // per block: a_scale
};
bool NBitsInt8Available(const PackedNBits& b);
void QuantizeRowForNBits(const PackedNBits& b, const float* a, Int8Row* row);
void MatMulNBitsRowInt8(const PackedNBits& b, const Int8Row& a, int64_t j0, int64_t j1, float* y);

// Writes columns [j0, j0 + cols) of rows [k0, k0 + kc) of dequantize(B)^T (a K x N matrix) as
// GEMM strips of nr columns (ops/math/gemm.h's BPanelSource layout), zeros past column `cols`.
void DequantizeNBitsPanel(const PackedNBits& b, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr,
                          float* dst);

}  // namespace quant_ms
}  // namespace onnxflow
