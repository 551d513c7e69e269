// BlockedConv's tiling and splitting rules, each with the measurement that set it.
#include "ops/blocked/blocked_conv_plan.h"

#include <algorithm>
#include <sstream>

#include "ops/blocked/blocked_conv_tile.h"

namespace onnxflow {
namespace {

// Tasks per core when a convolution splits over several: enough that the last one to finish
// leaves the other cores idle for little of the node's time.
constexpr int64_t kTasksPerCore = 8;
// Tiles per task: the task's outputs (6 x 64 floats per tile) stay in L2 between chunks.
constexpr int64_t kMaxTilesPerTask = 128;
// And the image pixels a task reads stay in L2 while the next group's weights go through it.
constexpr int64_t kRangeInputBytes = 256 * 1024;
// On several cores, the pixels are split (each core reading all the weights) while the weights are
// at most this many times the image: 1x1 448 -> 448 on 7x7 (9x) gained a little, 3x3 512 -> 512 on
// 7x7 (94x) lost 12%, 1x1 2048 -> 2048 on 7x7 (40x) was even.
constexpr int64_t kPixelSplitWeightRatio = 16;

}  // namespace

BlockedConvPlan MakeBlockedConvPlan(const BlockedConvLayout& layout, const Shape& x, const ConvGeometry& geometry,
                                    int threads, int64_t tile_pixels) {
  BlockedConvPlan p;
  p.x_shape = x;
  p.threads = threads;
  p.tile_pixels = tile_pixels;
  p.geometry = geometry;
  if (layout.winograd) {
    p.path = BlockedConvPlan::Path::kWinograd;
    return p;
  }
  // The stem reads a copy of its image with the padding written out (blocked_conv.cc): the tiles
  // see no pads.
  ConvGeometry& g = p.tile_geometry = geometry;
  if (layout.stem) {
    g.in_spatial = {g.in_spatial[0] + g.pads_begin[0] + g.pads_end[0], g.in_spatial[1] + g.pads_begin[1] + g.pads_end[1]};
    g.pads_begin = g.pads_end = {0, 0};
  }
  p.pixel_stride = layout.stem ? layout.block_channels : kChannelBlock;
  const int64_t out_pixels = g.out_size();
  p.tiles = (out_pixels + tile_pixels - 1) / tile_pixels;
  p.groups = (layout.out_width + layout.group_channels - 1) / layout.group_channels;

  // Split every (image, group) into ranges of tiles: a few per core, each at most kMaxTilesPerTask
  // and reading at most kRangeInputBytes of the image.
  const int64_t input_per_tile = tile_pixels * g.strides[0] * g.strides[1] * layout.in_width * sizeof(float);
  int64_t per_task = std::min({kMaxTilesPerTask, p.tiles, std::max<int64_t>(8, kRangeInputBytes / input_per_tile)});
  while (per_task > 8 && g.batch * p.groups * ((p.tiles + per_task - 1) / per_task) < kTasksPerCore * threads) {
    per_task = (per_task + 1) / 2;
  }
  p.ranges = (p.tiles + per_task - 1) / per_task;
  p.per_task = (p.tiles + p.ranges - 1) / p.ranges;  // ranges of equal length: 15 + 14 tiles, not 21 + 8
  // On one core, whichever of the image and the weights is bigger is walked once: one image range
  // through every group's weights (the weights stay in L2), or one group through every range. On
  // several, ranges outside unless the weights are much bigger than the image: the cores then
  // split the pixels, not the channels, so each core reads the image the previous layer's same
  // split wrote into its own cache, and all the weights. Split by channels, every core read half
  // its input from the other core's cache: 1x1 208 -> 208 on 14x14, ten in a row, two cores 0.92
  // -> 0.73 ms (one core 1.0); RegNetY-400MF at two threads 1.07 -> 1.02x ONNX Runtime. But each
  // core streaming all of 3x3 512 -> 512's 9.4 MB for a 7x7 image cost more: 6.5 -> 7.3 ms for ten.
  const int64_t image_floats = layout.in_width * g.in_size();
  p.groups_inner = image_floats > layout.packed_floats ||
                   (threads > 1 && layout.packed_floats <= kPixelSplitWeightRatio * image_floats);
  p.tasks = g.batch * p.groups * p.ranges;
  p.work = p.tasks * p.per_task * tile_pixels * layout.group_channels * layout.group_blocks * layout.block_channels *
           layout.taps;

  // Tiles of whole pixels on one output row with the window inside the image read the image
  // at fixed steps (BlockedTile's second way); a kernel row of taps is then one run of memory
  // when the columns are not dilated.
  const bool merge_rows = g.dilations[1] == 1;
  p.pointwise = IsPointwise(g);
  for (int64_t kh = 0; kh < g.kernel[0]; ++kh) {
    for (int64_t kw = 0; kw < (merge_rows ? 1 : g.kernel[1]); ++kw) {
      p.uniform_taps.push_back((kh * g.dilations[0] * g.in_spatial[1] + kw * g.dilations[1]) * p.pixel_stride);
    }
  }
  p.uniform_channels = merge_rows ? g.kernel[1] * layout.block_channels : layout.block_channels;
  return p;
}

std::string BlockedConvPlan::ToString() const {
  std::ostringstream o;
  o << "BlockedConvPlan X=" << ShapeToString(x_shape) << " threads=" << threads;
  if (path == Path::kWinograd) {
    o << " winograd";
    return o.str();
  }
  o << " direct tile=" << tile_pixels << "px tiles=" << tiles << " groups=" << groups << " ranges=" << ranges << "x"
    << per_task << " tasks=" << tasks << (groups_inner ? " groups-inner" : " ranges-inner")
    << (pointwise ? " pointwise" : "") << " uniform-taps=" << uniform_taps.size() << "x" << uniform_channels << "ch";
  return o.str();
}

}  // namespace onnxflow
