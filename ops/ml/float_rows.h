// Float32 loops of the ml feature ops, in Highway (one kernel per CPU target, chosen at run
// time), with the plain loops the tests compare them to. Nothing here knows about threads.
//
//   Binarize:  out[i] = x[i] > threshold ? 1 : 0            (NaN gives 0)
//   ScaleRow:  out[i] = (x[i] - offset[i]) * scale[i]        (one row of features)
//   ScaleAll:  out[i] = (x[i] - offset) * scale              (one offset/scale for all)
#pragma once

#include <cstdint>

namespace onnxflow {
namespace ml {

void BinarizeF32(const float* x, int64_t n, float threshold, float* out);
void ScaleRowF32(const float* x, int64_t n, const float* offset, const float* scale, float* out);
void ScaleAllF32(const float* x, int64_t n, float offset, float scale, float* out);

inline void BinarizeScalar(const float* x, int64_t n, float threshold, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = x[i] > threshold ? 1.0f : 0.0f;
}
inline void ScaleRowScalar(const float* x, int64_t n, const float* offset, const float* scale, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = (x[i] - offset[i]) * scale[i];
}
inline void ScaleAllScalar(const float* x, int64_t n, float offset, float scale, float* out) {
  for (int64_t i = 0; i < n; ++i) out[i] = (x[i] - offset) * scale;
}

}  // namespace ml
}  // namespace onnxflow
