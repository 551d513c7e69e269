#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_CONTROLFLOW_REGISTRARS(X) \
  X(RegisterIf)                            \
  X(RegisterLoop)                          \
  X(RegisterScan)

namespace onnxflow {

ONNXFLOW_CONTROLFLOW_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterControlflowKernels(KernelRegistry& registry);

}  // namespace onnxflow
