#include "ops/ml/register.h"

namespace onnxflow {

Status RegisterMlKernels(KernelRegistry& registry) {
  (void)registry;  // the ml family's kernels are being written
  return Status::Ok();
}

}  // namespace onnxflow
