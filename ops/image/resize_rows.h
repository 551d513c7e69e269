// The inner loop of separable Resize along an outer axis: one output row is a weighted sum of a
// few input rows, all contiguous:
//
//   out[i] = sum_k w[k] * rows[k][i]      for i in [0, n)
//
// float runs a Highway kernel chosen at run time for the CPU; double and the tests' reference use
// the plain loop. No threads here: the Resize kernel splits output rows over cores.
#pragma once

#include <cstdint>

namespace onnxflow {
namespace image {

void WeightedRowSumF32(const float* const* rows, const float* w, int64_t taps, int64_t n, float* out);

template <typename C>
void WeightedRowSumScalar(const C* const* rows, const C* w, int64_t taps, int64_t n, C* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = 0;
  for (int64_t k = 0; k < taps; ++k) {
    const C wk = w[k];
    if (wk == 0) continue;
    const C* row = rows[k];
    for (int64_t i = 0; i < n; ++i) out[i] += wk * row[i];
  }
}

inline void WeightedRowSum(const float* const* rows, const float* w, int64_t taps, int64_t n, float* out) {
  WeightedRowSumF32(rows, w, taps, n, out);
}
inline void WeightedRowSum(const double* const* rows, const double* w, int64_t taps, int64_t n, double* out) {
  WeightedRowSumScalar(rows, w, taps, n, out);
}

}  // namespace image
}  // namespace onnxflow
