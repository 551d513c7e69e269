#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterElementwiseKernels(KernelRegistry& registry);

}  // namespace onnxflow
