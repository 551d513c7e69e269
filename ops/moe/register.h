// com.microsoft MoE and QMoE: mixture-of-experts layers (ONNX Runtime's CPU semantics).
#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
#define ONNXFLOW_MOE_REGISTRARS(X) \
  X(RegisterMoE)   /* moe.cc */    \
  X(RegisterQMoE)  /* qmoe.cc */

namespace onnxflow {
namespace moe {
ONNXFLOW_MOE_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace moe

Status RegisterMoeKernels(KernelRegistry& registry);

}  // namespace onnxflow
