#include "ops/attention/register.h"

#include "ops/attention/kernels.h"

namespace onnxflow {

Status RegisterAttentionKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(attention::RegisterAttention(registry));
  ONNXFLOW_RETURN_IF_ERROR(attention::RegisterRotaryEmbedding(registry));
  ONNXFLOW_RETURN_IF_ERROR(attention::RegisterLinearAttention(registry));
  ONNXFLOW_RETURN_IF_ERROR(attention::RegisterFlexAttention(registry));
  return Status::Ok();
}

}  // namespace onnxflow
