#include "ops/random/register.h"

namespace onnxflow {

Status RegisterRandomKernels(KernelRegistry& registry) {
  (void)registry;  // the random family's kernels are being written
  return Status::Ok();
}

}  // namespace onnxflow
