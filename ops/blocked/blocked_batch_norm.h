// com.onnxflow BlockedBatchNormalization (blocked_batch_norm.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedBatchNorm(KernelRegistry& registry);

}  // namespace onnxflow
