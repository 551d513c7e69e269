#include "ops/elementwise/register.h"

#include "ops/elementwise/common.h"

namespace onnxflow {

Status RegisterElementwiseKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterArithmeticKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterPowKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterModKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterVariadicKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterCompareKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterLogicalKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBitwiseKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterWhereKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterUnaryMathKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterFloatClassKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBitCastKernels(registry));
  return Status::Ok();
}

}  // namespace onnxflow
