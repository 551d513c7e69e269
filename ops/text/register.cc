#include "ops/text/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterTextKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_TEXT_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
