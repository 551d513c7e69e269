#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterRnnKernels(KernelRegistry& registry);

}  // namespace onnxflow
