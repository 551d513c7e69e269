#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterTensorKernels(KernelRegistry& registry);

}  // namespace onnxflow
