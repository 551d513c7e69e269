#include "ops/contrib/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterContribKernels(KernelRegistry& registry) {
  using namespace contrib;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_CONTRIB_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
