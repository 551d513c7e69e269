// Moving a tensor's elements into a permuted order (the work behind Transpose, DepthToSpace and
// SpaceToDepth).
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel.h"

namespace onnxflow {
namespace tensor_ops {

// Checks that `perm` is a permutation of [0, rank).
Status ValidatePermutation(const std::vector<int64_t>& perm, int64_t rank);

// out[i0, i1, ...] = in[... with axis perm[k] at index ik ...]: `out` must already have shape
// in_shape permuted by `perm` and the same dtype. `in_shape` may differ from in.shape() only by
// a reshape (DepthToSpace views its input as 6-D). Large copies are split with ParallelFor.
Status Permute(const KernelContext& ctx, const Tensor& in, const Shape& in_shape, const std::vector<int64_t>& perm,
               Tensor* out);

}  // namespace tensor_ops
}  // namespace onnxflow
