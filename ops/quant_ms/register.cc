#include "ops/quant_ms/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterQuantMsKernels(KernelRegistry& registry) {
  using namespace quant_ms;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_QUANT_MS_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
