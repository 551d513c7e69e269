// LayerNormalization and RMSNormalization (see layer_norm.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterLayerNorm(KernelRegistry& registry);

}  // namespace onnxflow
