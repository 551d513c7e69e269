// com.onnxflow BlockedConv (blocked_conv.cc).
#pragma once

#include <cstdint>

#include "include/onnxflow/tensor.h"
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

// Whether BlockedConv runs a Conv of `group` groups with weights `w` [M, C / group, kh, kw]: group
// 1, or groups of equal input and output width that divide a block (2 to 16 channels: ResNeXt's
// 4 and 8, RegNet's 8 and 16) or are whole blocks up to 64 channels, at least a block of channels
// in all. Each output block then reads only its group's input blocks. (Width 1 is depthwise:
// BlockedDepthwiseConv.)
bool BlockedConvRunsGroups(int64_t group, const Shape& w);

Status RegisterBlockedConv(KernelRegistry& registry);

}  // namespace onnxflow
