// Direct depthwise 1-D and 2-D convolution: the SIMD plane kernel (depthwise-inl.h) per output channel,
// with the addend and activation applied as it stores; channels split over the cores.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/math/conv_depthwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/math/depthwise-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/math/conv_depthwise.h"

namespace onnxflow {

HWY_EXPORT(DepthwisePlaneImpl);
HWY_EXPORT(DepthwiseUsesScratchImpl);

bool IsDepthwise(const ConvGeometry& g) {
  return (g.kernel.size() == 1 || g.kernel.size() == 2) && g.in_channels == g.group && g.group > 1;
}

// A 1-D convolution is a 2-D one of height 1: its sizes go to the plane's columns.
static DepthwisePlane PlaneOf(const ConvGeometry& g) {
  if (g.kernel.size() == 1) {
    return {1, g.in_spatial[0], 1, g.out_spatial[0], 1, g.kernel[0], 1, g.strides[0], 1, g.dilations[0], 0,
            g.pads_begin[0], 0};
  }
  return {g.in_spatial[0], g.in_spatial[1], g.out_spatial[0], g.out_spatial[1], g.kernel[0], g.kernel[1],
          g.strides[0],    g.strides[1],    g.dilations[0],   g.dilations[1],   g.pads_begin[0], g.pads_begin[1], 0};
}

// Runs the plane kernel over every output plane, split over the cores; `plane_io` is null for
// float tensors, read and written in place.
static void RunPlanes(const ConvGeometry& g, const float* x, const float* w, const float* bias, const float* addend,
                      const ActivationSpec& activation, float* y, const DepthwisePlaneIo* plane_io, int threads) {
  const auto plane_kernel = HWY_DYNAMIC_DISPATCH(DepthwisePlaneImpl);
  DepthwisePlane p = PlaneOf(g);
  p.padded_w = DepthwisePaddedWidth(p);
  const bool padded = HWY_DYNAMIC_DISPATCH(DepthwiseUsesScratchImpl)(p);
  const int64_t mult = g.out_channels / g.in_channels;  // output channels per input channel
  const int64_t planes = g.batch * g.out_channels;
  const int64_t in_plane = p.ih_n * p.iw_n, out_plane = p.oh_n * p.ow_n;
  // A depthwise tap is a load, a multiply-add and a store (no register blocking): about four simple
  // operations, which is what ParallelFor's threshold counts. Counted as one, the 14x14 and 7x7
  // layers of ShuffleNet and MobileNet ran on one core, leaving the other idle.
  constexpr int64_t kOpsPerTap = 4;
  ParallelFor(threads, planes, out_plane * p.kh_n * p.kw_n * kOpsPerTap, [&](int64_t p0, int64_t p1) {
    std::vector<float> scratch(padded ? static_cast<size_t>(DepthwiseScratch(p)) : 0);
    std::vector<float> in_buf(plane_io != nullptr ? in_plane : 0), out_buf(plane_io != nullptr ? out_plane : 0);
    int64_t loaded = -1;  // the input plane in in_buf (a channel multiplier reuses it)
    for (int64_t plane = p0; plane < p1; ++plane) {
      const int64_t n = plane / g.out_channels, m = plane % g.out_channels;
      const int64_t index = n * g.in_channels + m / mult;
      const float* in = x + index * in_plane;
      float* out = y + plane * out_plane;
      if (plane_io != nullptr) {
        if (loaded != index) plane_io->load(index, in_buf.data());
        loaded = index;
        in = in_buf.data();
        out = out_buf.data();
      }
      plane_kernel(p, in, w + m * p.kh_n * p.kw_n, bias != nullptr ? bias[m] : 0.0f,
                   addend != nullptr ? addend + plane * out_plane : nullptr, activation, out, scratch.data());
      if (plane_io != nullptr) plane_io->store(plane, out);
    }
  });
}

void DepthwiseConv(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   const float* addend, const ActivationSpec& activation, float* y, int threads) {
  RunPlanes(g, x, w, bias, addend, activation, y, nullptr, threads);
}

void DepthwiseConvPlanes(const ConvGeometry& g, const DepthwisePlaneIo& io, const float* w, int threads) {
  RunPlanes(g, nullptr, w, nullptr, nullptr, ActivationSpec{}, nullptr, &io, threads);
}

}  // namespace onnxflow

#endif  // HWY_ONCE
