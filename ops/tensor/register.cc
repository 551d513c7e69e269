#include "ops/tensor/register.h"

#include "ops/tensor/kernels.h"

namespace onnxflow {

Status RegisterTensorKernels(KernelRegistry& registry) {
  using namespace tensor_ops;  // NOLINT: the per-file registration functions
  ONNXFLOW_RETURN_IF_ERROR(RegisterConstantKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterIdentityKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterReshapeKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterTransposeKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterConcatSplitKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSliceKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterPadKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterGatherKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterScatterKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterTileExpandKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSelectKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterMaskKernels(registry));
  return Status::Ok();
}

}  // namespace onnxflow
