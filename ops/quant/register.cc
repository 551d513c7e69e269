#include "ops/quant/register.h"

namespace onnxflow {

Status RegisterQuantKernels(KernelRegistry& registry) {
  using namespace quant_ops;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_QUANT_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
