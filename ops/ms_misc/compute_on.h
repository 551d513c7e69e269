// Running another family's kernel in place of this node's, on inputs the node rearranged.
#pragma once

#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel.h"

namespace onnxflow {
namespace ms_misc {

// Runs `kernel` on `inputs` (a none Value is an absent input) and hands its outputs on as this
// node's; the run's state (limits, byte budget, threads) and the node's name stay the node's, so
// the inner kernel's allocations count against the same limits and its errors name this node.
inline Status ComputeOn(const OpKernel& kernel, KernelContext& ctx, std::vector<Value> inputs) {
  const int in_count = static_cast<int>(inputs.size()), out_count = ctx.output_count();
  NodeSlots slots;
  for (int i = 0; i < in_count; ++i) slots.inputs.push_back(inputs[i].is_none() ? -1 : i);
  for (int o = 0; o < out_count; ++o) slots.outputs.push_back(ctx.has_output(o) ? in_count + o : -1);
  std::vector<Value> values = std::move(inputs);
  values.resize(static_cast<size_t>(in_count + out_count));
  KernelContext inner(slots, values.data(), &ctx.run(), ctx.node_name());
  ONNXFLOW_RETURN_IF_ERROR(kernel.Compute(inner));
  for (int o = 0; o < out_count; ++o) {
    if (ctx.has_output(o)) ctx.SetOutput(o, std::move(values[in_count + o]));
  }
  return Status::Ok();
}

}  // namespace ms_misc
}  // namespace onnxflow
