// One registration function per kernel file of the image family; register.cc calls them all.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {
namespace image {

Status RegisterResize(KernelRegistry& registry);          // Resize, Upsample (resize.cc)
Status RegisterGridSample(KernelRegistry& registry);      // grid_sample.cc
Status RegisterAffineGrid(KernelRegistry& registry);      // affine_grid.cc
Status RegisterRoiAlign(KernelRegistry& registry);        // roi_align.cc
Status RegisterNonMaxSuppression(KernelRegistry& registry);  // non_max_suppression.cc
Status RegisterImageDecoder(KernelRegistry& registry);    // image_decoder.cc

}  // namespace image
}  // namespace onnxflow
