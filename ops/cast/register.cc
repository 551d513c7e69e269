#include "ops/cast/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterCastKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_CAST_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
