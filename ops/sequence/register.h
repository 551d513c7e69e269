#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterSequenceKernels(KernelRegistry& registry);

}  // namespace onnxflow
