#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterControlflowKernels(KernelRegistry& registry);

}  // namespace onnxflow
