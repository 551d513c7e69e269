// Float32 SIMD row kernels of the 2-D pooling fast path (pool_rows-inl.h): one output row of
// a pooling window with stride 1 along the row. Callers decimate for larger strides.
#pragma once

#include <cstdint>

namespace onnxflow {

// out[i] = max over r < nrows, k < kw of rows[r][i + k * dw], for i in [0, n).
void MaxTapsRow(const float* const* rows, int64_t nrows, int64_t kw, int64_t dw, float* out, int64_t n);
// out[i] = scale * sum over the same taps.
void SumTapsRow(const float* const* rows, int64_t nrows, int64_t kw, int64_t dw, float scale, float* out, int64_t n);

}  // namespace onnxflow
