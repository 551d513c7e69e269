// Row products the attention and recurrent kernels are made of, on rows of contiguous numbers:
//
//   DotRows:        out[r] = dot(x, m + r * m_stride)           (scores = q . K^T, gates = W x)
//   AccumulateRows: out += sum_r w[r] * (m + r * m_stride)      (y = p . V)
//   ExpShifted:     x[i] = exp(x[i] - shift), returns the sum   (softmax)
//
// float runs a Highway kernel chosen at run time for the CPU; double (and the tests' reference)
// uses the plain loops below. Nothing here knows about threads: callers split the work.
#pragma once

#include <cmath>
#include <cstdint>

namespace onnxflow {
namespace vec {

void DotRowsF32(const float* x, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out);
void AccumulateRowsF32(const float* w, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out);
float ExpShiftedF32(float* x, int64_t n, float shift);

template <typename C>
void DotRowsScalar(const C* x, const C* m, int64_t m_stride, int64_t rows, int64_t n, C* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const C* row = m + r * m_stride;
    C sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += x[i] * row[i];
    out[r] = sum;
  }
}

template <typename C>
void AccumulateRowsScalar(const C* w, const C* m, int64_t m_stride, int64_t rows, int64_t n, C* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const C* row = m + r * m_stride;
    const C wr = w[r];
    if (wr == 0) continue;  // masked keys are common; 0 * finite adds nothing
    for (int64_t i = 0; i < n; ++i) out[i] += wr * row[i];
  }
}

template <typename C>
C ExpShiftedScalar(C* x, int64_t n, C shift) {
  C sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += (x[i] = std::exp(x[i] - shift));
  return sum;
}

// The type-generic entry points kernels call.
inline void DotRows(const float* x, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out) {
  DotRowsF32(x, m, m_stride, rows, n, out);
}
inline void DotRows(const double* x, const double* m, int64_t m_stride, int64_t rows, int64_t n, double* out) {
  DotRowsScalar(x, m, m_stride, rows, n, out);
}
inline void AccumulateRows(const float* w, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out) {
  AccumulateRowsF32(w, m, m_stride, rows, n, out);
}
inline void AccumulateRows(const double* w, const double* m, int64_t m_stride, int64_t rows, int64_t n,
                           double* out) {
  AccumulateRowsScalar(w, m, m_stride, rows, n, out);
}

inline float ExpShifted(float* x, int64_t n, float shift) { return ExpShiftedF32(x, n, shift); }
inline double ExpShifted(double* x, int64_t n, double shift) { return ExpShiftedScalar(x, n, shift); }

}  // namespace vec
}  // namespace onnxflow
