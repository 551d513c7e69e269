#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_CAST_REGISTRARS(X) \
  X(RegisterCastOps)

namespace onnxflow {

ONNXFLOW_CAST_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterCastKernels(KernelRegistry& registry);

}  // namespace onnxflow
