// How BlockedConv (blocked_conv.cc) runs one input shape: the path (Winograd or direct tiles), the
// tiling of the output, the ranges of tiles each task computes, the order tasks walk the image and
// the weights, and the taps a tile reads at fixed steps. Decided once per shape (the kernel keeps
// the last plan, ops/framework/last_plan.h); ToString() prints it for a person tuning the rules
// (blocked_conv_plan.cc).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/math/conv_geometry.h"

namespace onnxflow {

// What the plan reads of the kernel: fixed by W and the attributes when the kernel is made.
struct BlockedConvLayout {
  int64_t in_width = 0, out_width = 0;  // input and output channels with their pad lanes
  int64_t taps = 0;                     // kernel height x width
  int64_t block_channels = 0;           // 16, or a stem's few channels
  int64_t blocks = 0;                   // input channel blocks
  // Output channels per group of packed weights and per task (64; a grouped convolution's
  // max(16, group width)), and the input blocks each reads (all; its group's).
  int64_t group_channels = 0, group_blocks = 0;
  int64_t chunk_blocks = 1;             // input blocks whose weights one pass keeps in L2
  int64_t packed_floats = 0;            // the direct path's packed weights
  bool stem = false;                    // reads [N, C, H, W] with C < 16, interleaved and padded
  bool winograd = false;                // a 3x3 stride-1 convolution on the Winograd path
};

struct BlockedConvPlan {
  enum class Path : int8_t { kWinograd, kDirect };

  // The key: the plan is for this input shape, this many cores and this SIMD tile.
  Shape x_shape;
  int threads = 1;
  int64_t tile_pixels = 0;  // BlockedTilePixels(min(group_channels, out_width)) of the target

  Path path = Path::kDirect;
  ConvGeometry geometry;       // of the input as given
  ConvGeometry tile_geometry;  // as the tiles read it (a stem's padding written out: no pads)
  int64_t pixel_stride = 0;    // floats between an input block's pixels
  int64_t tiles = 0;           // of tile_pixels output pixels, per image and group
  int64_t groups = 0;          // of layout.group_channels output channels
  int64_t per_task = 0;        // tiles per task, at most (ranges differ by at most a tile)
  int64_t ranges = 0;          // ranges of tiles per image and group
  int64_t tasks = 0;           // batch x groups x ranges
  bool groups_inner = false;   // a task's range walks every group (weights bigger than the image)
  int64_t work = 0;            // multiply-adds in all, for the split over cores
  // Tiles on one output row with the window inside the image read at fixed steps: the taps' offsets
  // from a pixel's window, a kernel row at a time when the columns are not dilated.
  bool pointwise = false;
  std::vector<int64_t> uniform_taps;
  int64_t uniform_channels = 0;

  // The tiles [first, end) of range `r`: as even as the tiles cut, the longer ranges last (a 7 x 7
  // map's 9 tiles of 6 pixels in two ranges are 4 + 5 tiles, 24 + 25 pixels with the one-pixel
  // tile, not 5 + 4, 30 + 19).
  std::pair<int64_t, int64_t> RangeTiles(int64_t r) const { return {r * tiles / ranges, (r + 1) * tiles / ranges}; }
  bool For(const Shape& x, int threads_now, int64_t tile_pixels_now) const {
    return x == x_shape && threads_now == threads && tile_pixels_now == tile_pixels;
  }
  std::string ToString() const;
};

// The plan the rules give input shape `x` (already checked; `geometry` is its ConvGeometry).
BlockedConvPlan MakeBlockedConvPlan(const BlockedConvLayout& layout, const Shape& x, const ConvGeometry& geometry,
                                    int threads, int64_t tile_pixels);

}  // namespace onnxflow
