#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_TENSOR_REGISTRARS(X)                                      \
  X(RegisterConstantKernels)                                               \
  X(RegisterIdentityKernels)  /* Identity, Shape, Size */                  \
  X(RegisterReshapeKernels)  /* Reshape, Flatten, Squeeze, Unsqueeze */    \
  X(RegisterTransposeKernels)  /* Transpose, DepthToSpace, SpaceToDepth */ \
  X(RegisterConcatSplitKernels)  /* Concat, Split */                       \
  X(RegisterSliceKernels)  /* Slice */                                     \
  X(RegisterPadKernels)  /* Pad, CenterCropPad */                          \
  X(RegisterGatherKernels)  /* Gather, GatherElements, GatherND */         \
  X(RegisterScatterKernels)                                                \
  X(RegisterTileExpandKernels)  /* Tile, Expand */                         \
  X(RegisterSelectKernels)  /* NonZero, Compress, Unique */                \
  X(RegisterMaskKernels)  /* Trilu, OneHot, ReverseSequence */

namespace onnxflow {
namespace tensor_ops {
ONNXFLOW_TENSOR_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace tensor_ops

Status RegisterTensorKernels(KernelRegistry& registry);

}  // namespace onnxflow
