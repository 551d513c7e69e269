#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterImageKernels(KernelRegistry& registry);

}  // namespace onnxflow
