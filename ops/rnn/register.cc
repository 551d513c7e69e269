#include "ops/rnn/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterRnnKernels(KernelRegistry& registry) {
  using namespace rnn;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_RNN_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
