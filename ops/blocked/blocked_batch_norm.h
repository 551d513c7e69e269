// com.onnxflow BlockedBatchNormalization (blocked_batch_norm.cc).
#pragma once

#include <cstdint>

#include "ops/math/gemm_activation.h"
#include "ops/framework/registry.h"

namespace onnxflow {

// y = act(x * scale + shift) for `pixels` pixels of one channel block, scale and shift its 16
// lanes: the per-pixel pass of both blocked normalizations (BlockedGroupNormalization's too).
void ScaleShiftBlockPixels(const float* x, int64_t pixels, const float* scale, const float* shift,
                           const ActivationSpec& activation, float* y);

Status RegisterBlockedBatchNorm(KernelRegistry& registry);

}  // namespace onnxflow
