#include "ops/controlflow/register.h"

namespace onnxflow {

Status RegisterControlflowKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_CONTROLFLOW_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
