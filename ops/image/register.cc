#include "ops/image/register.h"

#include "ops/image/image_kernels.h"

namespace onnxflow {

Status RegisterImageKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(image::RegisterResize(registry));
  ONNXFLOW_RETURN_IF_ERROR(image::RegisterGridSample(registry));
  ONNXFLOW_RETURN_IF_ERROR(image::RegisterAffineGrid(registry));
  ONNXFLOW_RETURN_IF_ERROR(image::RegisterRoiAlign(registry));
  ONNXFLOW_RETURN_IF_ERROR(image::RegisterNonMaxSuppression(registry));
  ONNXFLOW_RETURN_IF_ERROR(image::RegisterImageDecoder(registry));
  return Status::Ok();
}

}  // namespace onnxflow
