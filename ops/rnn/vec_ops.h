// The one product the recurrent kernels are made of: a matrix (rows of n contiguous numbers)
// times a vector,
//
//   DotRows: out[r] = dot(x, m + r * m_stride)     (gates = W x_t, gates += R h_{t-1})
//
// float runs a Highway kernel chosen at run time for the CPU; double (and the tests' reference)
// uses the plain loop. Nothing here knows about threads: callers split over (direction, batch).
#pragma once

#include <cstdint>

namespace onnxflow {
namespace rnn {

void DotRowsF32(const float* x, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out);

template <typename C>
void DotRowsScalar(const C* x, const C* m, int64_t m_stride, int64_t rows, int64_t n, C* out) {
  for (int64_t r = 0; r < rows; ++r) {
    const C* row = m + r * m_stride;
    C sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += x[i] * row[i];
    out[r] = sum;
  }
}

inline void DotRows(const float* x, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out) {
  DotRowsF32(x, m, m_stride, rows, n, out);
}
inline void DotRows(const double* x, const double* m, int64_t m_stride, int64_t rows, int64_t n, double* out) {
  DotRowsScalar(x, m, m_stride, rows, n, out);
}

}  // namespace rnn
}  // namespace onnxflow
