#include "ops/nn/register.h"

namespace onnxflow {

Status RegisterNnKernels(KernelRegistry& registry) {
  (void)registry;  // the nn family's kernels are being written
  return Status::Ok();
}

}  // namespace onnxflow
