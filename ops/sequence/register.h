#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_SEQUENCE_REGISTRARS(X)                                   \
  X(RegisterSequenceBasics)                                               \
  X(RegisterSequenceTensorOps)  /* SplitToSequence, ConcatFromSequence */ \
  X(RegisterSequenceMap)                                                  \
  X(RegisterOptionalOps)

namespace onnxflow {

ONNXFLOW_SEQUENCE_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

Status RegisterSequenceKernels(KernelRegistry& registry);

}  // namespace onnxflow
