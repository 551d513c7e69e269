// Float32 array kernels shared by Softmax, LogSoftmax and the normalizations: the SIMD layer
// (Highway, dispatched to the best target at run time). Every function takes any length n >= 0
// and any alignment; outputs may alias inputs element for element. They never spawn threads.
#pragma once

#include <cstdint>

namespace onnxflow {

// max(x[0..n)); -inf when n == 0.
float RowMax(const float* x, int64_t n);
// max (`max`) or min of x[0..n), NaN when any element is NaN; the identity (-inf, +inf) when n == 0.
float RowExtreme(const float* x, int64_t n, bool max);
// The first i (the last, with `last`) with x[i] == v, or -1 (v NaN: always -1).
int64_t RowFind(const float* x, int64_t n, float v, bool last);
// y = exp(x * scale - shift) (x * scale exact inside a fused multiply-add); returns sum(y). Within
// 2 ulp of exp; a result below 1e-38 is 0 (a softmax's weight next to its maximum's 1).
float ExpShiftSum(const float* x, float shift, float* y, int64_t n, float scale = 1.0f);
// y = x * a + b, the product rounded before the sum (no fused multiply-add): ONNX Runtime's
// BatchNormalization, bit for bit (batch_norm.cc says why that matters).
void AffineRow(const float* x, float a, float b, float* y, int64_t n);
// sum(x).
double RowSum(const float* x, int64_t n);
// sum(x), or sum(x^2) with `squares`, accumulated in double (ReduceSum and its kin).
double RowSumWide(const float* x, int64_t n, bool squares);
// sum((x - c)^2).
double RowSumSquaredDiff(const float* x, float c, int64_t n);
// y = (x - mean) * inv_std * scale[i] + bias[i]; scale and bias may be null (1 and 0).
void NormalizeRow(const float* x, float mean, float inv_std, const float* scale, const float* bias, float* y,
                  int64_t n);

// Element-wise steps of a softmax along a strided axis, one row of the axis at a time:
// m = max(m, x);  y = exp(x - m) (as ExpShiftSum), s += y;  y = y / s;  y = x - m - log(s).
void MaxInto(const float* x, float* m, int64_t n);
void ExpSubAccumulate(const float* x, const float* m, float* y, float* s, int64_t n);
void DivideInto(float* y, const float* s, int64_t n);
void SubtractLogInto(const float* x, const float* m, const float* s, float* y, int64_t n);

// acc += x^2 (LRN's window of squared channels).
void AddSquares(const float* x, float* acc, int64_t n);
// y = x * (bias + coef * s)^exponent, the base assumed positive (LRN).
void ScaleByPower(const float* x, const float* s, float bias, float coef, float exponent, float* y, int64_t n);

}  // namespace onnxflow
