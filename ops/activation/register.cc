#include "ops/activation/register.h"

#include "ops/activation/common.h"
#include "ops/activation/elementwise_chain.h"

namespace onnxflow {

Status RegisterActivationKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterPointwiseActivationKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterClipKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterPReluKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSwiGluKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterElementwiseChainKernel(registry));
  return Status::Ok();
}

}  // namespace onnxflow
