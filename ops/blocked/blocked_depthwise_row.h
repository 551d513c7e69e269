// One output row of one channel block of a blocked depthwise convolution, as
// blocked_depthwise.cc hands it to the SIMD code (blocked_depthwise-inl.h).
#pragma once

#include <cstdint>

#include "hwy/base.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/math/gemm.h"  // ActivationSpec

namespace onnxflow {

// TX, TY: the element types of X and Y, each float or hwy::float16_t (a float16 model's
// activations, graph/blocked_half.h). The sums are float either way: a float16 X is widened as it
// is loaded and a float16 Y rounded to nearest even as it is stored, so Y is the float kernel's
// result on the widened X, rounded once.
template <typename TX, typename TY>
struct BlockedDepthwiseRow {
  const TX* plane = nullptr;  // the block's input: pixel (h, w) at plane + (h * in_w + w) * 16
  int64_t in_h = 0, in_w = 0;
  int64_t row0 = 0;                // input row of the window's first kernel row (may be outside)
  int64_t left = 0;                // pad columns before the image
  int64_t kh = 0, kw = 0;          // window
  int64_t stride_w = 1, dilation_h = 1, dilation_w = 1;
  const float* weights = nullptr;  // the block's taps: tap (i, j) at weights + (i * kw + j) * 16
  const float* bias = nullptr;     // the block's 16 biases (zeros when the node has none)
  int64_t out_w = 0;
  TY* out = nullptr;               // [out_w][16]
  ActivationSpec activation;
};

void RunBlockedDepthwiseRow(const BlockedDepthwiseRow<float, float>& row);
void RunBlockedDepthwiseRow(const BlockedDepthwiseRow<hwy::float16_t, float>& row);
void RunBlockedDepthwiseRow(const BlockedDepthwiseRow<float, hwy::float16_t>& row);
void RunBlockedDepthwiseRow(const BlockedDepthwiseRow<hwy::float16_t, hwy::float16_t>& row);

}  // namespace onnxflow
