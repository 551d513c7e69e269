#include "ops/generation/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterGenerationKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_GENERATION_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
