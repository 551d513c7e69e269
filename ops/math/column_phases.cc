// SplitColumnPhases (conv_geometry.h) with the vector row split of column_phases-inl.h.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/math/column_phases.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/math/column_phases-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {

void SplitColumnPhasesImpl(const float* image, int64_t channels, int64_t height, int64_t width, float* phases) {
  const int64_t half = (width + 1) / 2;
  for (int64_t c = 0; c < channels; ++c) {
    for (int64_t h = 0; h < height; ++h) {
      SplitEvenOddRow(image + (c * height + h) * width, width, phases + ((c * 2) * height + h) * half,
                      phases + ((c * 2 + 1) * height + h) * half);
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include "ops/math/conv_geometry.h"

namespace onnxflow {

HWY_EXPORT(SplitColumnPhasesImpl);

void SplitColumnPhases(const float* image, int64_t channels, int64_t height, int64_t width, float* phases) {
  HWY_DYNAMIC_DISPATCH(SplitColumnPhasesImpl)(image, channels, height, width, phases);
}

}  // namespace onnxflow

#endif  // HWY_ONCE
