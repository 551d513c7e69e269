#include "ops/image/register.h"

namespace onnxflow {

Status RegisterImageKernels(KernelRegistry& registry) {
  (void)registry;  // the image family's kernels are being written
  return Status::Ok();
}

}  // namespace onnxflow
