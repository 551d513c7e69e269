// Direct depthwise 2-D convolution: one input channel per group (the GEMM would have M = 1).
#pragma once

#include "ops/math/conv_geometry.h"
#include "ops/math/gemm.h"

namespace onnxflow {

// True when every group has one input channel and the conv is 2-D.
bool IsDepthwise2D(const ConvGeometry& g);

// y[n, m] = act(bias[m] + sum over the window of x[n, m / (M/C)] * w[m]) for every image and output
// channel; splits channels over `threads` cores.
void DepthwiseConv2D(const ConvGeometry& g, const float* x, const float* w, const float* bias,
                     const ActivationSpec& activation, float* y, int threads);

}  // namespace onnxflow
