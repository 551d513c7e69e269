#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_RANDOM_REGISTRARS(X)                \
  X(RegisterRandomTensorOps)  /* random_tensor.cc */ \
  X(RegisterBernoulli)  /* bernoulli.cc */           \
  X(RegisterMultinomial)  /* multinomial.cc */

namespace onnxflow {
namespace random_ops {
ONNXFLOW_RANDOM_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace random_ops

Status RegisterRandomKernels(KernelRegistry& registry);

}  // namespace onnxflow
