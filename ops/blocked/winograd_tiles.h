// The calls into the Winograd convolution's SIMD transforms (winograd-inl.h), as the driver in
// winograd.cc makes them.
#pragma once

#include <cstdint>

#include "ops/blocked/blocked_conv_tile.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/math/gemm.h"  // ActivationSpec

namespace onnxflow {

// F(4x4, 3x3): each 6x6 patch of the input gives a 4x4 tile of the output, in 36 products.
inline constexpr int64_t kWinogradTile = 4;
inline constexpr int64_t kWinogradPatch = 6;
inline constexpr int64_t kWinogradPoints = kWinogradPatch * kWinogradPatch;

// The transformed weights U = G g G^T of one group of output channels, for every input channel
// and point (G: winograd-inl.h's WeightRows, in float): first t = G g per tap column, then
// U = t G^T. The same float operations for float and 16-bit weights (those are widened exactly),
// so the same U, bit for bit.
struct WinogradWeights {
  // The group's first output channel of W as [in_width][9][ldg] (ldg: all output channels).
  const void* g = nullptr;
  WeightType type = WeightType::kFloat;
  int64_t ldg = 0, in_width = 0;
  int64_t width = 0;  // the group's output channels, a multiple of 16
  float* u = nullptr;  // [36][in_width][width]
};

// One input block's transform: tiles are numbered row by row, tiles_w to a row of the output;
// tile t's patch starts at input pixel (t / tiles_w * 4 - top, t % tiles_w * 4 - left).
struct WinogradInput {
  const void* x = nullptr;  // the block: pixel (h, w) at x + (h * width + w) * 16
  bool half = false;        // x float16, else float
  int64_t height = 0, width = 0, top = 0, left = 0, tiles_w = 0;
  float* v = nullptr;  // point xi of tile t at v + xi * xi_stride + (t - first_tile) * 16
  int64_t xi_stride = 0;
  int64_t first_tile = 0;  // the tile at v's start (a part of the image's tiles)
};

// One task's output transform: `tiles` tiles from tile0 on, `blocks` output blocks.
struct WinogradOutput {
  // Point xi of block b of the task's tile t at m + ((xi * blocks + b) * tiles + t) * 16.
  const float* m = nullptr;
  int64_t blocks = 0, tiles = 0, tile0 = 0, tiles_w = 0;
  int64_t height = 0, width = 0;  // of the output
  // Pixel (h, w) of block b at y + b * y_block_stride + (h * width + w) * 16; the residual has the
  // same layout and type and may be y itself (each pixel is read before it is written).
  void* y = nullptr;
  const void* residual = nullptr;
  bool half = false;  // y and the residual float16, else float
  int64_t y_block_stride = 0;
  const float* bias = nullptr;  // the blocks' 16 * blocks biases, or null
  ActivationSpec activation;
};

// On the best SIMD target of this CPU.
void RunWinogradInput(const WinogradInput& in, int64_t tile0, int64_t tile1);
void RunWinogradOutput(const WinogradOutput& out);
void RunWinogradWeights(const WinogradWeights& weights);

}  // namespace onnxflow
