#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterTextKernels(KernelRegistry& registry);

}  // namespace onnxflow
