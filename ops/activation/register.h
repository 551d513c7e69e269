#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterActivationKernels(KernelRegistry& registry);

}  // namespace onnxflow
