#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_GENERATION_REGISTRARS(X) \
  X(RegisterGreedySearch)                 \
  X(RegisterSampling)                     \
  X(RegisterBeamSearch)                   \
  X(RegisterNGramRepeatBlock)

namespace onnxflow {

ONNXFLOW_GENERATION_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterGenerationKernels(KernelRegistry& registry);

}  // namespace onnxflow
