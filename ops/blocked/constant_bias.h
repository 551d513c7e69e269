// The bias check the blocked convolutions (BlockedConv, BlockedDepthwiseConv) make at load.
#pragma once

#include <cstdint>
#include <string>

#include "ops/framework/kernel_info.h"

namespace onnxflow {

// Optional input 2, the bias of `op`'s `channels` output channels: null when absent; otherwise it
// must be a constant float tensor of that many values, which the kernel packs at load.
inline Result<const Tensor*> ConstantBias(const KernelInfo& info, const std::string& op, int64_t channels) {
  if (!info.has_input(2)) return static_cast<const Tensor*>(nullptr);
  const Tensor* b = info.constant_input(2);
  if (b == nullptr || b->dtype() != DataType::kFloat || b->size() != channels) {
    return InvalidArgument(op + ": B must be a constant float vector of " + std::to_string(channels) + " values");
  }
  return b;
}

}  // namespace onnxflow
