// com.onnxflow BlockedGroupNormalization (blocked_group_norm.cc): GroupNormalization, and
// InstanceNormalization as its one-channel groups, on a channel-blocked tensor.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedGroupNorm(KernelRegistry& registry);

}  // namespace onnxflow
