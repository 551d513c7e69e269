#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
#define ONNXFLOW_LEGACY_REGISTRARS(X)                                                  \
  X(RegisterScaleOps)  /* Affine, Scale, ImageScaler, ParametricSoftplus, ScaledTanh */ \
  X(RegisterCrop)      /* crop.cc */

namespace onnxflow {
namespace legacy {
ONNXFLOW_LEGACY_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)

// ONNX deprecated these ops at opset 10: a model importing opset 10 or later cannot use them.
inline constexpr int kLastLegacyOpset = 9;
}  // namespace legacy

Status RegisterLegacyKernels(KernelRegistry& registry);

}  // namespace onnxflow
