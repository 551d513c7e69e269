// Direct depthwise 1-D and 2-D convolution: one input channel per group (the GEMM would have M = 1).
#pragma once

#include <algorithm>
#include <functional>

#include "ops/math/conv_geometry.h"
#include "ops/math/gemm.h"

namespace onnxflow {

// The sizes one output plane of a depthwise convolution needs (for the SIMD plane kernel).
struct DepthwisePlane {
  int64_t ih_n, iw_n, oh_n, ow_n, kh_n, kw_n, sh, sw, dh, dw, ph, pw;
  // For column strides 1 and 2: the length of one zero-padded input row (stride 1) or of each of
  // its even and odd halves (stride 2), long enough for the last output column's widest tap.
  int64_t padded_w;
};

// Kernel widths up to this take the plane kernel's register-accumulating path (strides 1 and 2).
constexpr int64_t kDepthwiseMaxFastTaps = 32;
// ... and up to this, on targets with masked loads, read the image without a padded copy.
constexpr int64_t kDepthwiseMaxDirectTaps = 8;

inline int64_t DepthwisePaddedWidth(const DepthwisePlane& p) {
  const int64_t s = p.sw;
  return std::max((p.pw + p.iw_n + s - 1) / s, p.ow_n + (p.kw_n - 1) * p.dw / s);
}

// Floats of the padded plane in the plane kernel's scratch, with a vector's slack per tap column.
inline int64_t DepthwisePlaneFloats(const DepthwisePlane& p) { return p.ih_n * p.sw * p.padded_w + 64 + p.kw_n * p.dw; }

// Floats of scratch the plane kernel needs: the padded plane, then one padded input row.
inline int64_t DepthwiseScratch(const DepthwisePlane& p) { return DepthwisePlaneFloats(p) + p.sw * p.padded_w; }

// True when every group has one input channel and the conv is 1-D or 2-D (a 1-D one runs as a
// plane of height 1: audio models' depthwise layers, which as one GEMM per channel took 16x longer).
bool IsDepthwise(const ConvGeometry& g);

// y[n, m] = act(bias[m] + sum over the window of x[n, m / (M/C)] * w[m] + addend[n, m]) for every
// image and output channel (the addend, of y's shape, may be null); splits channels over `threads`
// cores.
void DepthwiseConv(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                   const float* addend, const ActivationSpec& activation, float* y, int threads);

// The same for an input and output that are not float tensors, one plane at a time (each task's
// planes pass through two buffers instead of the whole tensor through two copies):
// load(index, in) writes input plane `index` (image n, channel c: n * C + c) into `in`, ih * iw
// floats; store(plane, out) takes output plane `plane` (n * M + m), oh * ow floats, once written.
struct DepthwisePlaneIo {
  std::function<void(int64_t index, float* in)> load;
  std::function<void(int64_t plane, const float* out)> store;
};
void DepthwiseConvPlanes(const ConvGeometry& g, const DepthwisePlaneIo& io, const float* w, int threads);

}  // namespace onnxflow
