#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_REDUCE_REGISTRARS(X) \
  X(RegisterReduceOps)                \
  X(RegisterArgMinMax)                \
  X(RegisterCumulativeOps)            \
  X(RegisterTopK)

namespace onnxflow {

ONNXFLOW_REDUCE_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterReduceKernels(KernelRegistry& registry);

}  // namespace onnxflow
