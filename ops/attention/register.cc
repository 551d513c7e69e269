#include "ops/attention/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterAttentionKernels(KernelRegistry& registry) {
  using namespace attention;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_ATTENTION_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
