// SIMD part of the blocked depthwise convolution (blocked_depthwise.cc). With the channels in the
// lanes a depthwise tap is one vector multiply-add: the input pixel's 16 channels times the tap's
// 16 weights, no shuffles and no per-channel loops. Compiled once per CPU target through
// hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"
#include "ops/blocked/blocked_depthwise_row.h"
#include "ops/math/activate-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DepthwiseD = hn::CappedTag<float, kChannelBlock>;

// Output pixels computed side by side in the interior: independent sums hide the multiply-add
// latency that one pixel's chain of taps would wait on.
constexpr int64_t kDepthwisePixels = 4;

// Output columns [ow0, ow1) of the row, `lane0` onward, with every tap's column inside the image
// when kInterior (the rows outside were already dropped: [i0, i1) are the kernel rows inside).
template <bool kInterior>
HWY_INLINE void DepthwiseColumns(const BlockedDepthwiseRow& r, int64_t lane0, int64_t i0, int64_t i1, int64_t ow0,
                                 int64_t ow1) {
  const DepthwiseD d;
  using V = hn::Vec<DepthwiseD>;
  const V bias = hn::LoadU(d, r.bias + lane0);
  const int64_t row_floats = r.in_w * kChannelBlock;
  const float* top = r.plane + r.row0 * row_floats + lane0;  // kernel row 0 (may be outside)
  int64_t ow = ow0;
  if (kInterior) {
    for (; ow + kDepthwisePixels <= ow1; ow += kDepthwisePixels) {
      V acc[kDepthwisePixels];
      for (auto& a : acc) a = bias;
      for (int64_t i = i0; i < i1; ++i) {
        const float* row = top + i * r.dilation_h * row_floats;
        for (int64_t j = 0; j < r.kw; ++j) {
          const V w = hn::LoadU(d, r.weights + (i * r.kw + j) * kChannelBlock + lane0);
          const int64_t col = (ow * r.stride_w - r.left + j * r.dilation_w) * kChannelBlock;
          HWY_UNROLL(4)
          for (int64_t q = 0; q < kDepthwisePixels; ++q) {
            acc[q] = hn::MulAdd(hn::LoadU(d, row + col + q * r.stride_w * kChannelBlock), w, acc[q]);
          }
        }
      }
      for (int64_t q = 0; q < kDepthwisePixels; ++q) {
        hn::StoreU(Activate(d, r.activation, acc[q]), d, r.out + (ow + q) * kChannelBlock + lane0);
      }
    }
  }
  for (; ow < ow1; ++ow) {
    V acc = bias;
    for (int64_t i = i0; i < i1; ++i) {
      const float* row = top + i * r.dilation_h * row_floats;
      for (int64_t j = 0; j < r.kw; ++j) {
        const int64_t iw = ow * r.stride_w - r.left + j * r.dilation_w;
        if (!kInterior && (iw < 0 || iw >= r.in_w)) continue;
        const V w = hn::LoadU(d, r.weights + (i * r.kw + j) * kChannelBlock + lane0);
        acc = hn::MulAdd(hn::LoadU(d, row + iw * kChannelBlock), w, acc);
      }
    }
    hn::StoreU(Activate(d, r.activation, acc), d, r.out + ow * kChannelBlock + lane0);
  }
}

void DepthwiseRowImpl(const BlockedDepthwiseRow& r) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DepthwiseD()));
  // The kernel rows inside the image.
  int64_t i0 = 0, i1 = r.kh;
  while (i0 < i1 && r.row0 + i0 * r.dilation_h < 0) ++i0;
  while (i1 > i0 && r.row0 + (i1 - 1) * r.dilation_h >= r.in_h) --i1;
  // The output columns whose taps all fall inside: [first, last).
  const int64_t span = (r.kw - 1) * r.dilation_w;
  int64_t first = (r.left + r.stride_w - 1) / r.stride_w;
  int64_t last = r.in_w - 1 - span + r.left >= 0 ? (r.in_w - 1 - span + r.left) / r.stride_w + 1 : 0;
  first = std::min(first, r.out_w);
  last = std::max(first, std::min(last, r.out_w));
  for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
    DepthwiseColumns<false>(r, lane0, i0, i1, 0, first);
    DepthwiseColumns<true>(r, lane0, i0, i1, first, last);
    DepthwiseColumns<false>(r, lane0, i0, i1, last, r.out_w);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_
