// Direct depthwise 2-D convolution. Each output row accumulates k_h * k_w shifted input rows; the
// shift loop clips the columns that fall into the padding so the SIMD row kernel never reads
// outside the image.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/math/conv_depthwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/math/depthwise-inl.h"

#if HWY_ONCE

#include <algorithm>

#include "ops/math/conv_depthwise.h"

namespace onnxflow {

HWY_EXPORT(DepthwiseRowImpl);

bool IsDepthwise2D(const ConvGeometry& g) {
  return g.kernel.size() == 2 && g.in_channels == g.group && g.group > 1;
}

void DepthwiseConv2D(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     const ActivationSpec& activation, float* y, int threads) {
  const auto row_kernel = HWY_DYNAMIC_DISPATCH(DepthwiseRowImpl);
  const int64_t ih_n = g.in_spatial[0], iw_n = g.in_spatial[1];
  const int64_t oh_n = g.out_spatial[0], ow_n = g.out_spatial[1];
  const int64_t kh_n = g.kernel[0], kw_n = g.kernel[1];
  const int64_t sh = g.strides[0], sw = g.strides[1], dh = g.dilations[0], dw = g.dilations[1];
  const int64_t ph = g.pads_begin[0], pw = g.pads_begin[1];
  const int64_t mult = g.out_channels / g.in_channels;  // output channels per input channel
  const int64_t planes = g.batch * g.out_channels;
  ParallelRange(threads, planes, oh_n * ow_n * kh_n * kw_n, [&](int64_t p0, int64_t p1) {
    for (int64_t plane = p0; plane < p1; ++plane) {
      const int64_t n = plane / g.out_channels, m = plane % g.out_channels;
      const float* img = x + (n * g.in_channels + m / mult) * ih_n * iw_n;
      const float* wm = w + m * kh_n * kw_n;
      float* out = y + plane * oh_n * ow_n;
      const float b = bias != nullptr ? bias[m] : 0.0f;
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        float* orow = out + oh * ow_n;
        std::fill(orow, orow + ow_n, b);
        for (int64_t kh = 0; kh < kh_n; ++kh) {
          const int64_t ih = oh * sh - ph + kh * dh;
          if (ih < 0 || ih >= ih_n) continue;
          const float* irow = img + ih * iw_n;
          for (int64_t kw = 0; kw < kw_n; ++kw) {
            // Output columns whose input column iw = ow*sw - pw + kw*dw lies in [0, iw_n).
            const int64_t iw0 = kw * dw - pw;
            const int64_t q_lo = std::min(ow_n, iw0 >= 0 ? int64_t{0} : (-iw0 + sw - 1) / sw);
            const int64_t q_hi = std::max(q_lo, std::min(ow_n, iw0 < iw_n ? (iw_n - iw0 + sw - 1) / sw : int64_t{0}));
            if (q_hi > q_lo) row_kernel(irow + iw0 + q_lo * sw, wm[kh * kw_n + kw], orow + q_lo, q_hi - q_lo, sw);
          }
        }
        ApplyActivation(activation, orow, ow_n);
      }
    }
  });
}

}  // namespace onnxflow

#endif  // HWY_ONCE
