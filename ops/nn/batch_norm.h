// BatchNormalization (see batch_norm.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBatchNorm(KernelRegistry& registry);

}  // namespace onnxflow
