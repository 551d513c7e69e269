#include "ops/contrib/register.h"

#include "ops/contrib/kernels.h"

namespace onnxflow {

Status RegisterContribKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(contrib::RegisterFusedOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(contrib::RegisterGeluOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(contrib::RegisterNormOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(contrib::RegisterAttentionOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(contrib::RegisterRotaryEmbedding(registry));
  ONNXFLOW_RETURN_IF_ERROR(contrib::RegisterMiscOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(contrib::RegisterFusedAttention(registry));
  return Status::Ok();
}

}  // namespace onnxflow
