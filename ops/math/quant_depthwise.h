// Depthwise 2-D convolution of channels-last 8-bit tensors (QLinearConvNhwc, quant_conv.cc, when
// every group has one input and one output channel): per output pixel and vector of channels, an
// int32 sum over the window's taps, then QLinearConv's requantization. The integer GEMM would see
// one column per group there; this walks the channels as vector lanes instead.
//
// The zero points fold away: sum_t (x_t - x_zero)(w_t - w_zero) = sum_t x_t * w'_t - x_zero * sum_t w'_t
// with w' = w - w_zero[c], so the weights are stored as w' and the bias as bias - x_zero * sum w'.
// A tap in the padding reads a row of x_zero (it must add nothing, and x_zero * w' is what the
// folded bias takes off), so border pixels run the same loop as inner ones.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/math/conv_geometry.h"

namespace onnxflow {

// Channel counts are padded to this in the packed weights (the widest vector of int32 lanes,
// AVX-512's 16), so a vector that runs past the last channel multiplies zeros.
constexpr int64_t kQDepthwiseChannelPad = 16;

// W [C, 1, kh, kw] as w' = w - w_zero[c], tap-major: tap t of channel c at w[t * cp + c], zero for
// c >= channels. Each int32 holds w' in its low 16 bits and zeros above, which makes a product with
// a sign- or zero-extended byte one vpmaddwd (quant_depthwise-inl.h). The same on every target.
struct QDepthwiseWeights {
  int64_t channels = 0, taps = 0, cp = 0;
  std::vector<int32_t> w;
  std::vector<int32_t> sums;  // per channel: sum over taps of w' (for the folded bias)
};

// Whether QLinearConvNhwc takes the depthwise kernel: 2-D, one input and one output channel per
// group. (A channel multiplier above 1 stays on the per-group GEMM.)
bool IsQDepthwise(const ConvGeometry& g);
// The same from W's shape and the group attribute alone (for packing at load).
bool IsQDepthwiseWeight(const Shape& w, int64_t group);

// w: W [C, 1, kh, kw] (int8 or uint8); w_zero: 1 or C values, in W's type (null: 0).
QDepthwiseWeights PackQDepthwise(const Tensor& w, const Tensor* w_zero);

// The run's operands beside the weights: multiplier[c] = x_scale * w_scale[c] / y_scale.
struct QDepthwiseArgs {
  const uint8_t* x = nullptr;  // X [N, H, W, C]
  bool x_signed = false;
  int32_t x_zero = 0;
  const int32_t* bias = nullptr;  // C values or null
  const float* multiplier = nullptr;
  bool y_signed = false;
  int32_t y_zero = 0;
  uint8_t* y = nullptr;  // Y [N, H', W', C]
};

void QDepthwiseConv(const ConvGeometry& g, const QDepthwiseWeights& w, const QDepthwiseArgs& args, int threads);

// What the SIMD body (quant_depthwise-inl.h) reads: the packed weights, and the run's folded bias
// and multipliers, both padded with zeros to cp channels.
struct QDepthwiseRow {
  const int32_t* w = nullptr;
  const int32_t* bias = nullptr;
  const float* multiplier = nullptr;
  int64_t channels = 0, cp = 0, taps = 0;
  bool x_signed = false, y_signed = false;
  int32_t y_zero = 0;
};

}  // namespace onnxflow
