// com.onnxflow BlockedMaxPool, BlockedAveragePool, BlockedGlobalMaxPool, BlockedGlobalAveragePool
// (blocked_pool.cc): X float or float16, Y of X's type.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedPools(KernelRegistry& registry);

}  // namespace onnxflow
