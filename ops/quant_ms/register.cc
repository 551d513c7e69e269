#include "ops/quant_ms/register.h"

#include "ops/quant_ms/kernels.h"

namespace onnxflow {

Status RegisterQuantMsKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(quant_ms::RegisterQLinearBinary(registry));
  ONNXFLOW_RETURN_IF_ERROR(quant_ms::RegisterQLinearUnary(registry));
  ONNXFLOW_RETURN_IF_ERROR(quant_ms::RegisterQLinearConcat(registry));
  ONNXFLOW_RETURN_IF_ERROR(quant_ms::RegisterQLinearPool(registry));
  ONNXFLOW_RETURN_IF_ERROR(quant_ms::RegisterMatMulNBits(registry));
  return Status::Ok();
}

}  // namespace onnxflow
