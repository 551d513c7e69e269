#include "ops/sequence/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterSequenceKernels(KernelRegistry& registry) {
  return RegisterEach(registry, {ONNXFLOW_SEQUENCE_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
