#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterMathKernels(KernelRegistry& registry);

}  // namespace onnxflow
