#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterSignalKernels(KernelRegistry& registry);

}  // namespace onnxflow
