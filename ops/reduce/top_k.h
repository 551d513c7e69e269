// TopK (see top_k.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterTopK(KernelRegistry& registry);

}  // namespace onnxflow
