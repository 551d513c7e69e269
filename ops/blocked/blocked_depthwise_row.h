// One output row of one channel block of a blocked depthwise convolution, as
// blocked_depthwise.cc hands it to the SIMD code (blocked_depthwise-inl.h).
#pragma once

#include <cstdint>

#include "ops/blocked/blocked_layout.h"
#include "ops/math/gemm.h"  // ActivationSpec

namespace onnxflow {

struct BlockedDepthwiseRow {
  const float* plane = nullptr;  // the block's input: pixel (h, w) at plane + (h * in_w + w) * 16
  int64_t in_h = 0, in_w = 0;
  int64_t row0 = 0;                // input row of the window's first kernel row (may be outside)
  int64_t left = 0;                // pad columns before the image
  int64_t kh = 0, kw = 0;          // window
  int64_t stride_w = 1, dilation_h = 1, dilation_w = 1;
  const float* weights = nullptr;  // the block's taps: tap (i, j) at weights + (i * kw + j) * 16
  const float* bias = nullptr;     // the block's 16 biases (zeros when the node has none)
  int64_t out_w = 0;
  float* out = nullptr;            // [out_w][16]
  ActivationSpec activation;
};

void RunBlockedDepthwiseRow(const BlockedDepthwiseRow& row);

}  // namespace onnxflow
