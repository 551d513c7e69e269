#include "ops/activation/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterActivationKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_ACTIVATION_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
