// com.onnxflow BlockedMaxPool, BlockedAveragePool, BlockedGlobalMaxPool, BlockedGlobalAveragePool
// (blocked_pool.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedPools(KernelRegistry& registry);

}  // namespace onnxflow
