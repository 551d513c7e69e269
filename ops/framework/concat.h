// Joining tensors along an axis: Concat, ConcatFromSequence, and the stacked outputs of Loop and
// Scan all reduce to this. Works for every element type (strings element by element).
#pragma once

#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

// With `new_axis`, the parts must have equal shapes and the result has a new dimension at `axis`
// (in [0, rank]); otherwise the parts must agree on every dimension but `axis` (in [0, rank)).
// `axis` is already normalized. `out` is allocated by the caller with OutputShape's result.
Result<Shape> ConcatOutputShape(const std::vector<const Tensor*>& parts, int64_t axis, bool new_axis);
void ConcatInto(const std::vector<const Tensor*>& parts, int64_t axis, bool new_axis, Tensor* out);

// Copies `count` elements of any type (strings by assignment, others by memcpy).
void CopyElements(const Tensor& src, int64_t src_offset, Tensor* dst, int64_t dst_offset, int64_t count);

}  // namespace onnxflow
