#include "ops/quant/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterQuantKernels(KernelRegistry& registry) {
  using namespace quant_ops;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_QUANT_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
