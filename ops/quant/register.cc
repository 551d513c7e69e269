#include "ops/quant/register.h"

#include "ops/quant/kernels.h"

namespace onnxflow {

Status RegisterQuantKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(quant_ops::RegisterQuantizeLinear(registry));
  ONNXFLOW_RETURN_IF_ERROR(quant_ops::RegisterDequantizeLinear(registry));
  ONNXFLOW_RETURN_IF_ERROR(quant_ops::RegisterDynamicQuantizeLinear(registry));
  return Status::Ok();
}

}  // namespace onnxflow
