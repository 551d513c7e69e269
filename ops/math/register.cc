#include "ops/math/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterMathKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_MATH_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
