#include "ops/ml/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterMlKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_ML_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
