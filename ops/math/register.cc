#include "ops/math/register.h"

#include "ops/math/conv.h"
#include "ops/math/conv_transpose.h"
#include "ops/math/gemm_op.h"
#include "ops/math/matmul.h"
#include "ops/math/quantized.h"
#include "ops/math/small_ops.h"

namespace onnxflow {

Status RegisterMathKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterMatMulKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterGemmKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterConvKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterConvTransposeKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterQuantizedMathKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterDetKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterCol2ImKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterCausalConvKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterEinsumKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterDeformConvKernels(registry));
  return Status::Ok();
}

}  // namespace onnxflow
