#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterAttentionKernels(KernelRegistry& registry);

}  // namespace onnxflow
