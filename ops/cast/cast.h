// The cast family's kernels, registered by register.cc.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

// Cast (all versions) and CastLike (15+).
Status RegisterCastOps(KernelRegistry& registry);

}  // namespace onnxflow
