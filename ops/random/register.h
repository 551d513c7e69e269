#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterRandomKernels(KernelRegistry& registry);

}  // namespace onnxflow
