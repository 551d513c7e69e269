#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_SIGNAL_REGISTRARS(X)                    \
  X(RegisterDft)  /* dft.cc */                           \
  X(RegisterStft)  /* stft.cc */                         \
  X(RegisterWindows)  /* windows.cc */                   \
  X(RegisterMelWeightMatrix)  /* mel_weight_matrix.cc */

namespace onnxflow {
namespace signal {
ONNXFLOW_SIGNAL_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace signal

Status RegisterSignalKernels(KernelRegistry& registry);

}  // namespace onnxflow
