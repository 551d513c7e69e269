// SIMD part of the blocked GroupNormalization (blocked_group_norm.cc): with the channels in the
// lanes, a block's statistics are per-lane sums over its pixels (one vector add a pixel, no
// horizontal reduction until the block is done). The normalization itself is BlockedBatchNorm's
// per-pixel pass (ScaleShiftBlockPixels, blocked_batch_norm.h). Compiled once per CPU target
// through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_BLOCKED_BLOCKED_GROUP_NORM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_BLOCKED_GROUP_NORM_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_BLOCKED_GROUP_NORM_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_BLOCKED_GROUP_NORM_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"
#include "ops/blocked/blocked_layout.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Pixels summed in float before the partial sums are added in double. The values summed are
// deviations from a per-lane center (a pixel of the plane for the mean, the mean for the
// variance), so the float error scales with the spread of the values, not with their offset (a
// plane of values 100 +- 1 summed as they are lost about 1e-4 of its mean).
inline constexpr int64_t kFloatRun = 256;

// sums[lane] += the sum over `pixels` pixels of one block of x[lane] - center[lane], or of its
// square (`squares`): the two passes of the mean and the population variance.
void LaneSumsImpl(const float* HWY_RESTRICT x, int64_t pixels, const float* HWY_RESTRICT center, bool squares,
                  double* HWY_RESTRICT sums) {
  const hn::CappedTag<float, kChannelBlock> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  HWY_ALIGN float part[kChannelBlock];
  for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
    const auto c = hn::LoadU(d, center + lane0);
    for (int64_t p0 = 0; p0 < pixels; p0 += kFloatRun) {
      const int64_t p1 = std::min(pixels, p0 + kFloatRun);
      // Two sums over alternate pixels, so that consecutive adds do not wait on each other.
      auto s0 = hn::Zero(d), s1 = hn::Zero(d);
      int64_t p = p0;
      for (; p + 2 <= p1; p += 2) {
        const auto v0 = hn::Sub(hn::LoadU(d, x + p * kChannelBlock + lane0), c);
        const auto v1 = hn::Sub(hn::LoadU(d, x + (p + 1) * kChannelBlock + lane0), c);
        s0 = squares ? hn::MulAdd(v0, v0, s0) : hn::Add(s0, v0);
        s1 = squares ? hn::MulAdd(v1, v1, s1) : hn::Add(s1, v1);
      }
      if (p < p1) {
        const auto v = hn::Sub(hn::LoadU(d, x + p * kChannelBlock + lane0), c);
        s0 = squares ? hn::MulAdd(v, v, s0) : hn::Add(s0, v);
      }
      hn::Store(hn::Add(s0, s1), d, part);
      for (int64_t l = 0; l < lanes; ++l) sums[lane0 + l] += part[l];
    }
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_BLOCKED_GROUP_NORM_INL_H_
