#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_ACTIVATION_REGISTRARS(X)                     \
  X(RegisterPointwiseActivationKernels)  /* Relu ... Swish */ \
  X(RegisterClipKernels)  /* Clip */                          \
  X(RegisterPReluKernels)  /* PRelu */                        \
  X(RegisterSwiGluKernels)  /* SwiGLU */                      \
  X(RegisterElementwiseChainKernel)

namespace onnxflow {

ONNXFLOW_ACTIVATION_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterActivationKernels(KernelRegistry& registry);

}  // namespace onnxflow
