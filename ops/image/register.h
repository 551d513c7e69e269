#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_IMAGE_REGISTRARS(X)                         \
  X(RegisterResize)  /* Resize, Upsample (resize.cc */       \
  X(RegisterGridSample)  /* grid_sample.cc */                \
  X(RegisterAffineGrid)  /* affine_grid.cc */                \
  X(RegisterRoiAlign)  /* roi_align.cc */                    \
  X(RegisterNonMaxSuppression)  /* non_max_suppression.cc */ \
  X(RegisterImageDecoder)  /* image_decoder.cc */

namespace onnxflow {
namespace image {
ONNXFLOW_IMAGE_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace image

Status RegisterImageKernels(KernelRegistry& registry);

}  // namespace onnxflow
