// com.onnxflow BlockedConv (blocked_conv.cc).
#pragma once

#include <cstdint>

#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"

namespace onnxflow {

// BlockedConv's own attributes (besides Conv's and the epilogue's, FusedActivationSpec): where its
// output blocks land. A convolution joined into a channel Concat (graph/blocked_layout.cc) writes
// its blocks at `out_block_offset` of a tensor of `out_blocks` blocks, which the previous
// convolution of the Concat passes it as a fifth input (INTO); alone, both are unset.
struct BlockedConvSpec {
  int64_t out_blocks = 0;  // 0: its own output channels' blocks
  int64_t out_block_offset = 0;

  bool joined() const { return out_blocks != 0; }
  void WriteTo(onnx::NodeProto& node) const;
  static BlockedConvSpec Parse(const KernelInfo& info);
};

Status RegisterBlockedConv(KernelRegistry& registry);

}  // namespace onnxflow
