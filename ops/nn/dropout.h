// Dropout (see dropout.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterDropout(KernelRegistry& registry);

}  // namespace onnxflow
