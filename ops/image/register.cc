#include "ops/image/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterImageKernels(KernelRegistry& registry) {
  using namespace image;  // NOLINT: the per-file registration functions
  return RegisterEach(registry, {ONNXFLOW_IMAGE_REGISTRARS(ONNXFLOW_REGISTRAR_POINTER)});
}

}  // namespace onnxflow
