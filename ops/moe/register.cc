#include "ops/moe/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterMoeKernels(KernelRegistry& registry) {
  using namespace moe;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_MOE_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
