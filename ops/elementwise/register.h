#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_ELEMENTWISE_REGISTRARS(X)                        \
  X(RegisterArithmeticKernels)  /* Add Sub Mul Div */             \
  X(RegisterPowKernels)  /* Pow */                                \
  X(RegisterModKernels)  /* Mod */                                \
  X(RegisterVariadicKernels)  /* Max Min Sum Mean */              \
  X(RegisterCompareKernels)                                       \
  X(RegisterLogicalKernels)  /* And Or Xor Not */                 \
  X(RegisterBitwiseKernels)  /* BitShift BitwiseAnd/Or/Xor/Not */ \
  X(RegisterWhereKernels)  /* Where */                            \
  X(RegisterUnaryMathKernels)  /* Abs Neg Sign Ceil ... Atanh */  \
  X(RegisterFloatClassKernels)  /* IsNaN IsInf */                 \
  X(RegisterBitCastKernels)  /* BitCast */

namespace onnxflow {

ONNXFLOW_ELEMENTWISE_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterElementwiseKernels(KernelRegistry& registry);

}  // namespace onnxflow
