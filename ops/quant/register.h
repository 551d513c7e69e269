#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterQuantKernels(KernelRegistry& registry);

}  // namespace onnxflow
