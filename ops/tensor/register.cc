#include "ops/tensor/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterTensorKernels(KernelRegistry& registry) {
  using namespace tensor_ops;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_TENSOR_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
