// Winograd F(4x4, 3x3) for BlockedConv's 3x3 convolutions of stride 1 (winograd.cc): a 4x4 tile
// of outputs costs 36 products per (input, output) channel pair instead of 144, for 4x the
// weights' memory (float weights; 16-bit ones are transformed as the convolution runs).
#pragma once

#include <cstdint>
#include <memory>

#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel.h"
#include "ops/math/conv_geometry.h"
#include "ops/blocked/blocked_conv_tile.h"
#include "ops/blocked/winograd_tiles.h"
#include "ops/math/gemm.h"
#include "ops/math/gemm_scratch.h"

namespace onnxflow {

// One image of one run, blocked: X [in channel blocks, in_rows, in_cols, 16], Y and Z by output block.
// X, and Y with Z, are float or float16 (a float16 model's activations): the transforms widen
// and narrow them in registers.
struct WinogradImage {
  const void* x = nullptr;
  bool half_x = false;
  int64_t in_rows = 0, in_cols = 0, top = 0, left = 0;  // top/left: the pads before
  int64_t out_rows = 0, out_cols = 0;
  void* y = nullptr;                 // the first of this convolution's output blocks
  const void* residual = nullptr;    // Z's first block, or null; may be y
  bool half_y = false;               // Y and Z float16
  int64_t block_stride = 0;          // elements from one output block to the next, in y and in Z
  const float* bias = nullptr;       // the padded output channels' biases, or null
  ActivationSpec activation;
};

class WinogradConv {
 public:
  // Whether BlockedConv runs a convolution of these attributes and weights [M, C, kh, kw] this
  // way: a 3x3 window, stride 1, no dilation, whole input blocks (not a stem), and weights that
  // stay within kMaxWeightBytes once transformed.
  static bool Applies(const ConvAttributes& attrs, const Shape& w);

  // W [out_channels, channels, 3, 3] of `type`, for channels padded to in_width and out_width
  // (multiples of 16; the pad channels get zero weights): float W is transformed here, 16-bit W
  // is kept 16-bit and transformed by each task as it runs (winograd.cc says why).
  WinogradConv(const void* w, WeightType type, int64_t out_channels, int64_t channels, int64_t in_width,
               int64_t out_width);

  // One image: its input tiles' transform, then per task (a range of tiles, a group of 64
  // output channels) the 36 products as pointwise blocked tiles and the output transform.
  void Run(const KernelContext& ctx, const WinogradImage& image) const;

 private:
  // Writes U of the group from output channel c0 of `g` (W by input channel) into `u`
  // ([36][in_width][group width]).
  void TransformGroup(const PackedWeights& g, int64_t c0, float* u) const;
  // U of the group from output channel c0: the constructor's, or (16-bit W) transformed into
  // `transformed`, memory of the process's arena (winograd.cc says why).
  const float* GroupWeights(int64_t c0, AlignedFloats* transformed) const;

  // Transformed input tiles: point xi of input block b's tile t at
  // v + xi * xi_stride + b * block_stride + (t - first_tile) * 16.
  struct TransformedInput {
    const float* v;
    int64_t xi_stride, block_stride, first_tile;
  };
  // M = V U for `count` tiles from tile0 and the group from output channel c0 (into the task's
  // scratch `m`), then Y = A^T M A into the image's output.
  void ProductsAndOutput(const TransformedInput& v, const float* u, int64_t c0, int64_t tile0, int64_t count, float* m,
                         const WinogradImage& image, int64_t tiles_w) const;
  // Run for an image whose V is too large to keep: a part of its tiles at a time.
  void RunInParts(const KernelContext& ctx, const WinogradImage& image, int64_t tiles, int64_t tiles_w) const;

  int64_t in_width_, out_width_;
  // Float W: U by groups of 64 output channels, [group][xi][in channel][group width], or
  PackedWeights u_;
  // 16-bit W: W itself as [in channel][tap][out channel] (WinogradWeights' layout).
  PackedWeights g_;
};

}  // namespace onnxflow
