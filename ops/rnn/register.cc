#include "ops/rnn/register.h"

namespace onnxflow {

Status RegisterRnnKernels(KernelRegistry& registry) {
  (void)registry;  // the rnn family's kernels are being written
  return Status::Ok();
}

}  // namespace onnxflow
