// Depthwise 2-D convolution of channels-last 8-bit tensors (QLinearConvNhwc, quant_conv.cc, when
// every group has one input and one output channel): per output pixel and vector of channels, an
// int32 sum over the window's taps, then QLinearConv's requantization. The integer GEMM would see
// one column per group there; this walks the channels as vector lanes instead.
//
// The zero points fold away: sum_t (x_t - x_zero)(w_t - w_zero) = sum_t x_t * w'_t - x_zero * sum_t w'_t
// with w' = w - w_zero[c], so the weights are stored as w' and the bias as bias - x_zero * sum w'.
// A tap in the padding reads a row of x_zero (it must add nothing, and x_zero * w' is what the
// folded bias takes off), so border pixels run the same loop as inner ones.
//
// On a CPU with AVX-512 VNNI four taps go into one vpdpbusd per int32 lane: the bytes of four taps
// are interleaved per channel (two rounds of unpacks) and multiplied by w' packed the same way, a
// quarter of the multiplies of the 16-bit path and no widening loads. w' must be an int8 there:
// it is for int8 weights with zero point 0 (the zoo's u8s8 files) and uint8 ones with zero point
// 128; any other channel (its w' spans at most 255 values) is stored as w' - o[c], o[c] = min +
// 128, and the sum of its taps' x, times o[c], added back (a vpdpbusd by ones beside each one by
// w'; MobileNetV2 u8u8 per tensor, whose zero points are not 128: depthwise 1.02..1.18 -> 0.70..0.85
// ms per run over 6 alternated profiles, against the 16-bit path).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/math/conv_geometry.h"

namespace onnxflow {

// Channel counts are padded to this in the packed weights (the widest vector of int32 lanes,
// AVX-512's 16, and the VNNI path's 32 bytes of channels), so a vector that runs past the last
// channel multiplies zeros.
constexpr int64_t kQDepthwiseChannelPad = 32;
// The VNNI path's units of channels: 64 (a zmm of bytes per tap) while at least 64 of the cp
// padded channels remain, then 32 (a ymm), so a layer of 32 channels does no 64-channel work.
inline int64_t QDepthwiseVnniUnit(int64_t cp, int64_t c) { return cp - c >= 64 ? 64 : 32; }

// W [C, 1, kh, kw] as w' = w - w_zero[c], tap-major: tap t of channel c at w[t * cp + c], zero for
// c >= channels. Each int32 holds w' in its low 16 bits and zeros above, which makes a product with
// a sign- or zero-extended byte one vpmaddwd (quant_depthwise-inl.h). The same on every target.
struct QDepthwiseWeights {
  int64_t channels = 0, taps = 0, cp = 0;
  std::vector<int32_t> w;
  std::vector<int32_t> sums;  // per channel: sum over taps of w' (for the folded bias)
  // The VNNI path's weights, when every w' fits in int8 (else empty): per unit of channels
  // (QDepthwiseVnniUnit; the unit from channel c starts at byte c * groups * 4) and group of 4
  // taps (taps past the last are 0), 4 vectors of int32 lanes, each lane 4 taps of one channel.
  // Lane j of vector k holds channel 16 * (j / 4) + 4 * k + j % 4 of the unit: the order in which
  // unpacks within 128-bit lanes leave the interleaved bytes (QDepthwiseVnniChannel), undone by
  // the epilogue's packs.
  std::vector<int8_t> w4;
  int64_t groups = 0;  // (taps + 3) / 4
  std::vector<int32_t> offsets;  // o[c] per channel (w4 holds w' - o[c]); empty when all are 0
};

// Channel (within its unit of `width` channels) of lane `lane` of the VNNI accumulators, lane in
// [0, width): vector k = lane / (width / 4), lane j = lane % (width / 4) of it.
inline int64_t QDepthwiseVnniChannel(int64_t width, int64_t lane) {
  const int64_t k = lane / (width / 4), j = lane % (width / 4);
  return 16 * (j / 4) + 4 * k + j % 4;
}

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
  // The VNNI path (AVX-512 target with VNNI only, else null): w4 as QDepthwiseWeights's, bias,
  // multiplier and offsets (null when all are 0) then in its lane order per unit.
  const int8_t* w4 = nullptr;
  const int32_t* offsets = nullptr;
  int64_t groups = 0;
};

// Where the SIMD body finds pixel i's tap t: ptrs[i * ptr_step + t] + offset + i * byte_step.
// Either each pixel has its own pointers (ptr_step = taps, byte_step = 0: the border, where taps
// fall in the padding), or all share pixel 0's, moved by the stride (ptr_step = 0, byte_step =
// stride * C: the columns whose window lies inside the image, with no pointers to write per pixel).
struct QDepthwiseTaps {
  const uint8_t* const* ptrs = nullptr;
  int64_t ptr_step = 0, byte_step = 0, offset = 0;
  const uint8_t* At(int64_t i, int64_t t) const { return ptrs[i * ptr_step + t] + offset + i * byte_step; }
  QDepthwiseTaps Skip(int64_t n) const { return {ptrs + n * ptr_step, ptr_step, byte_step, offset + n * byte_step}; }
};

}  // namespace onnxflow
