// Gemm (all versions) and com.onnxflow FusedGemm.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterGemmKernels(KernelRegistry& registry);

}  // namespace onnxflow
