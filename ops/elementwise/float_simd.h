// Float32 array functions for the hot elementwise ops, vectorized with Highway and dispatched to
// the best target the CPU has (AVX-512, AVX2, SSE4 or the portable baseline). Other types, and
// ops rare enough not to matter, use plain loops in the kernels.
#pragma once

#include <cstdint>

namespace onnxflow {

enum class FloatBinaryOp : int { kAdd, kSub, kMul, kDiv, kMax, kMin };

// out[i] = a[i] op b[i] for n floats; a (b) repeats a[0] (b[0]) when a_bcast (b_bcast).
// Max and Min propagate NaN like numpy. out may be a or b (in place).
void FloatBinary(FloatBinaryOp op, const float* a, bool a_bcast, const float* b, bool b_bcast, float* out, int64_t n);

// out[r * width + i] = full[r * width + i] op row[i] (row op full when row_first), for `rows`
// rows: one operand repeating row after row (MiddleBroadcast, broadcast.h).
void FloatBinaryRows(FloatBinaryOp op, const float* full, const float* row, bool row_first, float* out, int64_t rows,
                     int64_t width);

enum class FloatUnaryOp : int {
  kAbs,
  kNeg,
  kSqrt,
  kReciprocal,
  kExp,
  kLog,
  kErf,
  kTanh,
  kSigmoid,
  kCeil,
  kFloor,
  kRound,
};

// y[i] = op(x[i]) for n floats. Round is half to even. y may be x (in place).
void FloatUnary(FloatUnaryOp op, const float* x, float* y, int64_t n);

}  // namespace onnxflow
