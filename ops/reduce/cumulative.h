// CumSum and CumProd (see cumulative.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterCumulativeOps(KernelRegistry& registry);

}  // namespace onnxflow
