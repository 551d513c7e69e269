// Conv (all versions) and com.onnxflow FusedConv.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterConvKernels(KernelRegistry& registry);

}  // namespace onnxflow
