// Transpose of a matrix of bytes, the 1-byte element case of Transpose: the layout changes at
// the edges of a quantized channels-last region and inside a channel shuffle (quant_layout.cc).
#pragma once

#include <cstdint>

namespace onnxflow {
namespace tensor_ops {

// dst[c * dst_stride + r] = src[r * src_stride + c] for r < rows, c < cols.
void TransposeBytes(const uint8_t* src, int64_t src_stride, uint8_t* dst, int64_t dst_stride, int64_t rows,
                    int64_t cols);

}  // namespace tensor_ops
}  // namespace onnxflow
