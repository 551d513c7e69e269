#include "ops/nn/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterNnKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_NN_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
