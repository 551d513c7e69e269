// MaxPool, AveragePool, LpPool and the global pools (see pool.cc, global_pool.cc), MaxUnpool and
// MaxRoiPool (max_unpool.cc, max_roi_pool.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterPools(KernelRegistry& registry);
Status RegisterGlobalPools(KernelRegistry& registry);
Status RegisterMaxUnpool(KernelRegistry& registry);
Status RegisterMaxRoiPool(KernelRegistry& registry);

}  // namespace onnxflow
