#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterMlKernels(KernelRegistry& registry);

}  // namespace onnxflow
