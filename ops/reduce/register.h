#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterReduceKernels(KernelRegistry& registry);

}  // namespace onnxflow
