#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_MS_MISC_REGISTRARS(X)    \
  X(RegisterConvTransposeWithDynamicPads) \
  X(RegisterMaxpoolWithMask)              \
  X(RegisterWordConvEmbedding)            \
  X(RegisterBifurcationDetector)          \
  X(RegisterUnfoldTensor)                 \
  X(RegisterDynamicTimeWarping)           \
  X(RegisterMatMulFpQ4)                   \
  X(RegisterSparseToDenseMatMul)

namespace onnxflow {

ONNXFLOW_MS_MISC_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

// The small com.microsoft CPU ops of ONNX Runtime that no other family covers. Independent of
// registration order: ConvTransposeWithDynamicPads finds the ConvTranspose kernel it runs on itself.
Status RegisterMsMiscKernels(KernelRegistry& registry);

}  // namespace onnxflow
