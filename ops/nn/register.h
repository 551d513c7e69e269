#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterNnKernels(KernelRegistry& registry);

}  // namespace onnxflow
