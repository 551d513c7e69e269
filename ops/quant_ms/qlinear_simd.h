// The 8-bit loops of the com.microsoft QLinear ops, in SIMD through Highway where they are hot.
//
// Binary ops work in float, the same formula in the vector body and the scalar tail so that a
// result never depends on where a run was cut, and ONNX Runtime's (MLAS's) formula, the output zero
// point inside the rounding:
//   add: y = sat(round_half_even(fma(a, ra, fma(b, rb, zc - ra * za - rb * zb))))   ra = sa/sc, rb = sb/sc
//        (B's term first, as MLAS's AVX2 kernel; with A broadcast A's term first, folded into the constant)
//   mul: y = sat(round_half_even(fma((a - za) * (b - zb), m, zc)))                  m = sa*sb/sc
// Half to even is not the same on either side of an odd zero point: ONNX's QuantizeLinear
// (round(x / s) + z) and ONNX Runtime's QLinearAdd / QLinearMul, which its optimizer also makes
// of a QDQ model's DQ -> Add / Mul -> Q, differ on exact ties (1 in 10 elements with scales 0.5, 0.5,
// 1 and zero point 125); onnxflow follows ONNX Runtime, whose results users compare with.
// The product of two shifted 8-bit values is exact in float (|p| <= 65025). A unary op (Sigmoid,
// LeakyRelu, a requantizing copy) is a 256-entry lookup table built once per kernel or run.
#pragma once

#include <cstdint>

namespace onnxflow {

struct QBinaryParams {
  float za = 0, zb = 0, zc = 0;  // zero points
  float ra = 1, rb = 1;          // add: the scale ratios; mul: ra = sa * sb / sc
  float lo = 0, hi = 255;        // the output type's range
};

// y[i] = op(a[a_bcast ? 0 : i], b[b_bcast ? 0 : i]) for i < n.
void QLinearAddU8(const uint8_t* a, bool a_bcast, const uint8_t* b, bool b_bcast, uint8_t* y, int64_t n,
                  const QBinaryParams& p);
void QLinearAddS8(const int8_t* a, bool a_bcast, const int8_t* b, bool b_bcast, int8_t* y, int64_t n,
                  const QBinaryParams& p);
void QLinearMulU8(const uint8_t* a, bool a_bcast, const uint8_t* b, bool b_bcast, uint8_t* y, int64_t n,
                  const QBinaryParams& p);
void QLinearMulS8(const int8_t* a, bool a_bcast, const int8_t* b, bool b_bcast, int8_t* y, int64_t n,
                  const QBinaryParams& p);

// The constant of the add, zc - ra * za - rb * zb, as two fused multiply-adds: fma(-rb, zb,
// fma(-ra, za, zc)). One function outside the per-target code, so that the vector body and the
// scalar tail use the same bits: as an inline expression GCC contracted it into FMAs in the AVX2
// and AVX-512 bodies and not in the baseline tail, so a run cut at a different element could round
// an exact tie apart. The fused form is the one the AVX-512 body computed when its results were
// compared with ONNX Runtime's.
float AddFixedPart(const QBinaryParams& p);

// round_half_even(v) + zero saturated to [lo, hi] (NaN gives lo).
int32_t RoundSaturate(float v, float zero, float lo, float hi);

// RoundSaturate for a finite v, inline, with the bounds already less the zero point
// (below = lo - zero, above = hi - zero): a loop over channels that calls it stays vectorizable.
// Half to even in the default rounding mode, as std::nearbyint, without its libm call (which saves
// and restores the FP environment: 0.4 ms of a 14x14x136 QLinearAveragePool's 0.43): adding and
// taking away 1.5 * 2^23 leaves no fraction bits, so the sum rounds as the mode says. After the
// clamp |v| is at most 510; the compiler may not fold the pair (no -ffast-math).
inline int32_t RoundSaturateFinite(float v, float zero, float below, float above) {
  v = v < below ? below : (v > above ? above : v);
  constexpr float kRound = 12582912.0f;
  return static_cast<int32_t>((v + kRound) - kRound + zero);
}

// The sum of n 8-bit values, exact (QLinearGlobalAveragePool's plane sums: psadbw).
int64_t SumOfBytes(const uint8_t* x, int64_t n);
int64_t SumOfBytes(const int8_t* x, int64_t n);

// sums[i] += x[i] for i < n (a channels-last pixel into its channels' sums). The caller keeps the
// sums from overflowing.
void AddBytes(const uint8_t* x, int64_t n, int32_t* sums);
void AddBytes(const int8_t* x, int64_t n, int32_t* sums);

// sums[i] += row[taps[0] + i], then += row[taps[1] + i], ... for i < n: a pooling window's taps
// added in order, each a run of the row, the sums kept in registers across the taps.
void AddRuns(const float* row, const int64_t* taps, int64_t tap_count, int64_t n, float* sums);

// An average pool's requantization, in ONNX Runtime's order (the zero point inside the rounding):
//   y[i] = sat(round_half_even(sums[i] / count_i / y_scale + y_zero)), a count of 0 gives y_zero,
// NaN gives lo; count_i = count_scale * counts[i] (counts[0] for every i when one_count), exact
// for the whole numbers a pool counts.
void RequantizeMeans(const float* sums, const float* counts, bool one_count, float count_scale, int64_t n,
                     float y_scale, float y_zero, uint8_t* y);
void RequantizeMeans(const float* sums, const float* counts, bool one_count, float count_scale, int64_t n,
                     float y_scale, float y_zero, int8_t* y);

// phases[r * phase_len + j] = row[j * stride + r] for every j * stride + r < n: a strided row
// split into its stride's contiguous runs (2 and 3 through interleaved loads).
void SplitPhases(const float* row, int64_t n, int64_t stride, int64_t phase_len, float* phases);

// y[i] = table[x[i] as an unsigned byte]: int8 values index by their bit pattern.
void ApplyByteTable(const uint8_t* table, const uint8_t* x, uint8_t* y, int64_t n);
// The same on `rows` rows of n bytes, row r at x + r * x_stride and y + r * y_stride, the table
// loaded once (a channels-last QLinearConcat's 16-byte runs, one per pixel).
void ApplyByteTableRows(const uint8_t* table, const uint8_t* x, int64_t x_stride, uint8_t* y, int64_t y_stride,
                        int64_t n, int64_t rows);

}  // namespace onnxflow
