// Registers every kernel onnxflow ships, one call per op family.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterAllKernels(KernelRegistry& registry);

// The process-wide registry of every kernel (built on first use, then immutable).
const KernelRegistry& GlobalKernelRegistry();

}  // namespace onnxflow
