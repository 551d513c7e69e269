// com.onnxflow BlockedDepthwiseConv (blocked_depthwise.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedDepthwiseConv(KernelRegistry& registry);

}  // namespace onnxflow
