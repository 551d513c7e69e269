// Transpose of a matrix of 4-byte elements (float, int32, uint32), Transpose's most common case:
// NCHW <-> NHWC at the edges of converted models, [N, C, HW] -> [N, HW, C] in detector heads.
#pragma once

#include <cstdint>

namespace onnxflow {
namespace tensor_ops {

// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols.
void TransposeWords(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride, int64_t rows,
                    int64_t cols);

}  // namespace tensor_ops
}  // namespace onnxflow
