#include "ops/random/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterRandomKernels(KernelRegistry& registry) {
  using namespace random_ops;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_RANDOM_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
