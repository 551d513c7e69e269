#include "ops/ms_misc/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterMsMiscKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_MS_MISC_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
