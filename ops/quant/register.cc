#include "ops/quant/register.h"

namespace onnxflow {

Status RegisterQuantKernels(KernelRegistry& registry) {
  (void)registry;  // the quant family's kernels are being written
  return Status::Ok();
}

}  // namespace onnxflow
