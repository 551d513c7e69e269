// If, Loop and Scan: kernels that run prepared subgraphs (see ops/framework/subgraph.h).
#pragma once

#include <memory>
#include <vector>

#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"
#include "ops/framework/subgraph.h"

namespace onnxflow {

// Stacks per-iteration tensors along a new axis `axis` (Loop and Scan outputs); `reverse` stacks
// them last-first. All parts must share dtype and shape.
Result<Tensor> StackIterations(const std::vector<Tensor>& parts, int64_t axis, bool reverse, KernelContext& ctx,
                               int output_index);

}  // namespace onnxflow
