#include "ops/reduce/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterReduceKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_REDUCE_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
