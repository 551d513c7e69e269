// Per-file registration functions of the tensor family; register.cc calls them all.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {
namespace tensor_ops {

Status RegisterConstantKernels(KernelRegistry& registry);   // Constant, ConstantOfShape, EyeLike, Range
Status RegisterIdentityKernels(KernelRegistry& registry);   // Identity, Shape, Size
Status RegisterReshapeKernels(KernelRegistry& registry);    // Reshape, Flatten, Squeeze, Unsqueeze
Status RegisterTransposeKernels(KernelRegistry& registry);  // Transpose, DepthToSpace, SpaceToDepth
Status RegisterConcatSplitKernels(KernelRegistry& registry);  // Concat, Split
Status RegisterSliceKernels(KernelRegistry& registry);      // Slice
Status RegisterGatherKernels(KernelRegistry& registry);     // Gather, GatherElements, GatherND
Status RegisterScatterKernels(KernelRegistry& registry);    // Scatter, ScatterElements, ScatterND, TensorScatter
Status RegisterPadKernels(KernelRegistry& registry);        // Pad, CenterCropPad
Status RegisterTileExpandKernels(KernelRegistry& registry);  // Tile, Expand
Status RegisterSelectKernels(KernelRegistry& registry);     // NonZero, Compress, Unique
Status RegisterMaskKernels(KernelRegistry& registry);       // Trilu, OneHot, ReverseSequence

}  // namespace tensor_ops
}  // namespace onnxflow
