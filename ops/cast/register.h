#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterCastKernels(KernelRegistry& registry);

}  // namespace onnxflow
