#include "ops/legacy/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterLegacyKernels(KernelRegistry& registry) {
  using namespace legacy;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_LEGACY_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
