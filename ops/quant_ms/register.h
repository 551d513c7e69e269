// The com.microsoft quantized ops (kernels.h lists them).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterQuantMsKernels(KernelRegistry& registry);

}  // namespace onnxflow
