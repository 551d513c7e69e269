#include "ops/attention/register.h"

namespace onnxflow {

Status RegisterAttentionKernels(KernelRegistry& registry) {
  (void)registry;  // the attention family's kernels are being written
  return Status::Ok();
}

}  // namespace onnxflow
