#include "ops/signal/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterSignalKernels(KernelRegistry& registry) {
  using namespace signal;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_SIGNAL_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
