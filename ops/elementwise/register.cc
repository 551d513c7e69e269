#include "ops/elementwise/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterElementwiseKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_ELEMENTWISE_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
