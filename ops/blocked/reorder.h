// com.onnxflow ToBlocked / FromBlocked (reorder.cc), and the transpose they and the blocked stem
// share.
#pragma once

#include <cstdint>

#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"

namespace onnxflow {

// FromBlocked's attribute: the channels of the plain tensor it writes (the last block's pad lanes
// dropped); 0 keeps every lane. ToBlocked's: the channels its X must have (what its reader's
// weights expect: the blocked copy rounds them up to whole blocks); 0 takes any.
struct FromBlockedSpec {
  int64_t channels = 0;

  void WriteTo(onnx::NodeProto& node) const;
  static FromBlockedSpec Parse(const KernelInfo& info);
};

// `channels` planes of `pixels` floats, `plane_stride` apart, into pixel-major rows of `lanes`
// floats (lanes >= channels; the lanes past `channels` are zero). Transposed 16 pixels at a time,
// so both sides stay within L1 while a tile is moved.
void InterleaveChannels(const float* planes, int64_t plane_stride, int64_t channels, int64_t pixels, int64_t lanes,
                        float* interleaved);

Status RegisterBlockedReorders(KernelRegistry& registry);

}  // namespace onnxflow
