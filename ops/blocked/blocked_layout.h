// The channel-blocked layout that convolutional networks run in between convolutions (the graph
// pass graph/blocked_layout.cc chooses where). A blocked tensor is an ordinary 5-D float tensor
// [N, ceil(C/16), H, W, 16]: each pixel's 16 channels of a block are contiguous, so a convolution
// with its output channels in the vector lanes reads and writes whole vectors with no transposes,
// and elementwise ops and Concat over blocks work on it unchanged. When C is not a multiple of 16
// the last block has pad lanes; they hold finite values that no consumer treats as channels (and
// Concat, which would put them between channels, is not given such tensors).
#pragma once

#include <cstdint>
#include <string>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

inline constexpr int64_t kChannelBlock = 16;

// [N, C, H, W] of a blocked [N, C/16, H, W, 16] tensor (C counting the pad lanes), or an error
// naming `input`.
inline Result<Shape> UnblockedShape(const Shape& blocked, const char* input) {
  if (blocked.size() != 5 || blocked[4] != kChannelBlock) {
    return InvalidArgument(std::string("input '") + input + "' is not channel-blocked [N, C/16, H, W, 16]");
  }
  return Shape{blocked[0], blocked[1] * kChannelBlock, blocked[2], blocked[3]};
}

// UnblockedShape of input `input` of `op` (a blocked kernel), which must hold the `blocks` channel
// blocks that `needed_by` (its weights, say) needs; an error naming both otherwise.
inline Result<Shape> UnblockedShapeOfBlocks(const Shape& blocked, const char* input, int64_t blocks,
                                            const std::string& op, const std::string& needed_by) {
  ONNXFLOW_ASSIGN_OR_RETURN(Shape nchw, UnblockedShape(blocked, input));
  if (blocked[1] != blocks) {
    return InvalidArgument(op + ": input '" + input + "' " + ShapeToString(blocked) + " has " +
                           std::to_string(blocked[1]) + " channel blocks, " + needed_by + " needs " +
                           std::to_string(blocks));
  }
  return nchw;
}

// A blocked activation holds float, or float16 in a float16 model: the kernels that take both
// compute in float (widening float16 as they load it). OK for those two types, otherwise an error
// naming `op` and its input.
inline Status RequireFloatOrHalf(const Tensor& x, const std::string& op, const char* input) {
  if (x.dtype() == DataType::kFloat || x.dtype() == DataType::kFloat16) return Status::Ok();
  return InvalidArgument(op + ": input '" + input + "' must be float or float16, got " + DataTypeName(x.dtype()));
}

inline Shape BlockedShape(const Shape& nchw) {
  return Shape{nchw[0], (nchw[1] + kChannelBlock - 1) / kChannelBlock, nchw[2], nchw[3], kChannelBlock};
}

}  // namespace onnxflow
