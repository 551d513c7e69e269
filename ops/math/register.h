#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_MATH_REGISTRARS(X) \
  X(RegisterMatMulKernels)          \
  X(RegisterGemmKernels)            \
  X(RegisterConvKernels)            \
  X(RegisterConvTransposeKernels)   \
  X(RegisterQuantizedMathKernels)   \
  X(RegisterQuantConvKernels)       \
  X(RegisterDetKernels)             \
  X(RegisterCol2ImKernels)          \
  X(RegisterCausalConvKernels)      \
  X(RegisterEinsumKernels)          \
  X(RegisterDeformConvKernels)     \
  X(RegisterGatedActivationKernels)

namespace onnxflow {

ONNXFLOW_MATH_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterMathKernels(KernelRegistry& registry);

}  // namespace onnxflow
