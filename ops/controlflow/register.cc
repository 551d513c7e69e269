#include "ops/controlflow/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterControlflowKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_CONTROLFLOW_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
