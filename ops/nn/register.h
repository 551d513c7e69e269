#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_NN_REGISTRARS(X) \
  X(RegisterPools)                \
  X(RegisterGlobalPools)          \
  X(RegisterMaxUnpool)            \
  X(RegisterMaxRoiPool)           \
  X(RegisterBatchNorm)            \
  X(RegisterInstanceGroupNorm)    \
  X(RegisterLayerNorm)            \
  X(RegisterLrn)                  \
  X(RegisterLpNormalization)      \
  X(RegisterMeanVarianceNorm)     \
  X(RegisterSoftmaxOps)           \
  X(RegisterDropout)              \
  X(RegisterLosses)               \
  X(RegisterOptimizers)

namespace onnxflow {

ONNXFLOW_NN_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterNnKernels(KernelRegistry& registry);

}  // namespace onnxflow
