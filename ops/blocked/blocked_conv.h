// com.onnxflow BlockedConv (blocked_conv.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedConv(KernelRegistry& registry);

}  // namespace onnxflow
