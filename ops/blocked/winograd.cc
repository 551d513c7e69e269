// Winograd F(4x4, 3x3) for channel-blocked convolutions (winograd.h). Per image:
//  1. V = B^T d B for every tile's 6x6 patch of every input block, into a scratch laid out as 36
//     blocked images of one pixel per tile ([xi][block][tile][16]), split over the cores;
//  2. per task, a range of tiles and a group of 64 output channels: the 36 products
//     M[xi] = V[xi] U[xi] summed over input channels, which are 36 pointwise convolutions of
//     those one-pixel-per-tile images, run by BlockedConv's own SIMD tile (RunBlockedTile) into a
//     scratch of the task's; then Y = A^T M A with bias, residual and activation, into the output.
// A large image (V past kMaxWholeImageV; with 16-bit weights, past kMaxWholeImageVHalf) runs in
// parts instead: per task a part's V, then its products and output for the groups (RunInParts).
// The SIMD transforms are in winograd-inl.h.
#include "ops/blocked/winograd.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/blocked/winograd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/blocked/winograd-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <memory>
#include <vector>

#include "ops/blocked/blocked_conv_tile.h"
#include "ops/blocked/winograd_tiles.h"
#include "ops/framework/parallel.h"

namespace onnxflow {

HWY_EXPORT(WinogradInputImpl);
HWY_EXPORT(WinogradOutputImpl);
HWY_EXPORT(WinogradWeightsImpl);

void RunWinogradInput(const WinogradInput& in, int64_t tile0, int64_t tile1) {
  HWY_DYNAMIC_DISPATCH(WinogradInputImpl)(in, tile0, tile1);
}
void RunWinogradOutput(const WinogradOutput& out) { HWY_DYNAMIC_DISPATCH(WinogradOutputImpl)(out); }
void RunWinogradWeights(const WinogradWeights& weights) { HWY_DYNAMIC_DISPATCH(WinogradWeightsImpl)(weights); }

namespace {

// The transformed weights are 4x the plain ones; past this a layer's weights would stream from
// memory for the few tiles of its (then usually small) maps, and ResNet-50 would outgrow ONNX
// Runtime's peak memory: 256 x 256 channels, 9.4 MB.
constexpr int64_t kMaxWeightBytes = int64_t{256} * 256 * kWinogradPoints * sizeof(float);
// Tiles per task at most: the task's M (36 x 64 x tiles floats) stays in L2.
constexpr int64_t kMaxTilesPerTask = 30;
// Past this, V (36 floats per tile and input channel, 2.25x the input) is not in cache when the
// products read it back, and it is too big for the scratch free list: the image runs in parts of
// kMaxTilesPerTask tiles instead, each part's V transformed where it is used (a third of a MB for
// 64 channels). ISNet's 64-channel layers on 512 x 512 wrote a 151 MB V per convolution, every
// one of them faulted in again (2 MB pages cleared) at every run.
constexpr int64_t kMaxWholeImageV = int64_t{8} << 20;
// With 16-bit weights the image runs in parts from a quarter of that: such a model is run for its
// memory, and a whole V is the biggest buffer of a convolution on a large map. YOLOv8n fp16 at 640
// (3.7-7.4 MB V at 80 x 80 and 160 x 160): peak RSS 49.2 -> 46.3 MB at 1 thread, 51.5 -> 50.6 at
// 2, the same time (40.4-42.2 -> 40.0-41.4 ms at 1, 33.4-35.2 -> 32.0-34.7 at 2, rounds
// alternated). Not lower: Inception v1 fp16's V of at most 1.8 MB ran 3.6% slower in parts.
constexpr int64_t kMaxWholeImageVHalf = int64_t{2} << 20;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

bool AllOnes(const std::vector<int64_t>& v) {
  return std::all_of(v.begin(), v.end(), [](int64_t x) { return x == 1; });
}

}  // namespace

bool WinogradConv::Applies(const ConvAttributes& attrs, const Shape& w) {
  if (w.size() != 4 || w[2] != 3 || w[3] != 3 || w[1] < kChannelBlock || attrs.group != 1) return false;
  if (!attrs.kernel_shape.empty() && attrs.kernel_shape != std::vector<int64_t>{3, 3}) return false;
  if (!AllOnes(attrs.strides) || !AllOnes(attrs.dilations)) return false;
  const int64_t in_width = CeilDiv(w[1], kChannelBlock) * kChannelBlock;
  const int64_t out_width = CeilDiv(w[0], kChannelBlock) * kChannelBlock;
  return in_width * out_width * kWinogradPoints * static_cast<int64_t>(sizeof(float)) <= kMaxWeightBytes;
}

// A 16-bit model's weights (graph/half_compute.cc keeps them 16-bit) stay 16-bit here, and each
// task transforms its group's U as it runs (WinogradWeights, into memory freed after the task):
// the same U as the float path's, bit for bit. Measured on real_inception_v1 fp16 (float model:
// 109 MB peak RSS, 13.9 ms on one core, max abs 5.4e-7 from ONNX Runtime's fp16 outputs):
//  - U kept in float, 36 numbers per 9 weights (8x their bytes): 99 MB;
//  - U rounded to 16 bits: 77 MB, and the added rounding tripled the error (1.3e-6; squeezenet
//    5.0e-6 -> 1.7e-5, past rtol 1e-3 on one class);
//  - no Winograd for 16-bit weights (the direct tiles): 50 MB but 17.6 ms, 1.27x the float model;
//  - transformed per task (this): 61-63 MB, the float model's error (5.4e-7), 1.07x its time on
//    one core (loaded machine, best of 5 rounds: 16.6 vs 15.5 ms). The transform is the cost:
//    squeezenet's 64 -> 256 channels on 13x13 (16 tiles) spends 0.12 of its 0.5 ms in it.
WinogradConv::WinogradConv(const void* w, WeightType type, int64_t out_channels, int64_t channels, int64_t in_width,
                           int64_t out_width)
    : in_width_(in_width), out_width_(out_width) {
  // W as [in channel][tap][out channel], pad channels zero (the bits of +0 in every type).
  PackedWeights g(type, in_width * 9 * out_width);
  std::fill_n(g.mutable_data<char>(), g.size() * WeightBytes(type), 0);
  const int64_t bytes = WeightBytes(type);
  const char* wd = static_cast<const char*>(w);
  char* gd = g.mutable_data<char>();
  for (int64_t o = 0; o < out_channels; ++o) {
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t k = 0; k < 9; ++k) {
        std::copy_n(wd + ((o * channels + c) * 9 + k) * bytes, bytes, gd + ((c * 9 + k) * out_width + o) * bytes);
      }
    }
  }
  if (type != WeightType::kFloat) {
    g_ = std::move(g);
    return;
  }
  u_ = PackedWeights(WeightType::kFloat, kWinogradPoints * in_width * out_width);
  for (int64_t c0 = 0; c0 < out_width; c0 += kGroupChannels) {
    TransformGroup(g, c0, u_.mutable_data<float>() + c0 * kWinogradPoints * in_width);
  }
}

void WinogradConv::TransformGroup(const PackedWeights& g, int64_t c0, float* u) const {
  WinogradWeights group;
  group.g = g.at(c0);
  group.type = g.type();
  group.ldg = out_width_;
  group.in_width = in_width_;
  group.width = std::min(kGroupChannels, out_width_ - c0);
  group.u = u;
  RunWinogradWeights(group);
}

namespace {

// The input transform's view of one input block of `image`, V still to be placed.
WinogradInput InputOf(const WinogradImage& image, int64_t block, int64_t tiles_w) {
  WinogradInput in;
  const size_t bytes = image.half_x ? sizeof(uint16_t) : sizeof(float);
  in.x = static_cast<const char*>(image.x) + block * image.in_rows * image.in_cols * kChannelBlock * bytes;
  in.half = image.half_x;
  in.height = image.in_rows;
  in.width = image.in_cols;
  in.top = image.top;
  in.left = image.left;
  in.tiles_w = tiles_w;
  return in;
}

}  // namespace

void WinogradConv::Run(const KernelContext& ctx, const WinogradImage& image) const {
  const int64_t tiles_w = CeilDiv(image.out_cols, kWinogradTile);
  const int64_t tiles = CeilDiv(image.out_rows, kWinogradTile) * tiles_w;
  const int64_t in_blocks = in_width_ / kChannelBlock;
  const int64_t xi_stride = in_blocks * tiles * kChannelBlock;
  const int64_t whole_limit = u_.size() == 0 ? kMaxWholeImageVHalf : kMaxWholeImageV;
  if (kWinogradPoints * xi_stride * static_cast<int64_t>(sizeof(float)) > whole_limit) {
    RunInParts(ctx, image, tiles, tiles_w);
    return;
  }

  // 1. V: [xi][block][tile][16]. RunBlockedTile reads the 6 pixels of a tile group whole, so a
  // short last group reads up to 5 tiles past the end: zeros there, not stale bits.
  const int64_t tail = (kTilePixels - 1) * kChannelBlock;
  AlignedFloats v = AlignedFloats::Make(kWinogradPoints * xi_stride + tail, /*zero=*/false);
  std::fill(v.get() + kWinogradPoints * xi_stride, v.get() + kWinogradPoints * xi_stride + tail, 0.0f);
  // The cores split the tiles (not the input blocks), as the products below split them: each core
  // transforms the rows of the image the previous layer's same split left in its cache, into the
  // part of V it then multiplies. Split by blocks, half of both came from the other core's cache:
  // the input transform took 3.4x the CPU time on two cores that it took on one (ten 64 -> 64
  // layers on 56 x 56, 4.65 ms on one core, 4.05 on two).
  ParallelFor(ctx, tiles, in_blocks * kWinogradPoints * kChannelBlock * 8, [&](int64_t tile0, int64_t tile1) {
    for (int64_t block = 0; block < in_blocks; ++block) {
      WinogradInput in = InputOf(image, block, tiles_w);
      in.v = v.get() + block * tiles * kChannelBlock;
      in.xi_stride = xi_stride;
      RunWinogradInput(in, tile0, tile1);
    }
  });
  const TransformedInput whole{v.get(), xi_stride, tiles * kChannelBlock, 0};

  // 2. Tasks of (tile range, output group): enough for every core, an equal number per core.
  // Ranges are cut at whole tile calls (kTilePixels tiles): a call of 2 tiles costs nearly what
  // one of 6 does, so 16 tiles in two ranges are 6 + 10, not 8 + 8. A task runs its range in
  // parts of at most kMaxTilesPerTask tiles (its M stays in L2). Float weights: a range per part.
  // 16-bit weights: as few ranges as the cores need, each task transforming its group's U once
  // (a range of 30 tiles per task cost squeezenet's 3x3 layers a fifth more than float).
  const int threads = ctx.threads();
  const int64_t groups = CeilDiv(out_width_, kGroupChannels);
  const int64_t calls = CeilDiv(tiles, kTilePixels);
  const bool transform = u_.size() == 0;
  int64_t ranges = transform ? 1 : CeilDiv(tiles, kMaxTilesPerTask);
  while (groups * ranges < 2 * threads && ranges < calls) ++ranges;
  while ((groups * ranges) % threads != 0 && ranges < calls) ++ranges;
  ranges = std::min(ranges, calls);

  // On one core, groups outside (a group's U stays in cache through its ranges). On several,
  // ranges outside: a core's tasks are a run of ranges, every group of each, so it writes whole
  // pixels of Y, what the next layer's input transform reads on that core.
  const bool ranges_outside = threads > 1;
  auto run_task = [&](int64_t task) {
    const int64_t range = ranges_outside ? task / groups : task % ranges;
    const int64_t group = ranges_outside ? task % groups : task / ranges;
    const int64_t range0 = range * calls / ranges * kTilePixels;
    const int64_t range_tiles = std::min(tiles, (range + 1) * calls / ranges * kTilePixels) - range0;
    const int64_t c0 = group * kGroupChannels;
    const int64_t part_tiles = std::min(range_tiles, kMaxTilesPerTask);
    AlignedFloats m = AlignedFloats::Make(kWinogradPoints * kGroupChannels * part_tiles, /*zero=*/false);
    AlignedFloats transformed;
    const float* u = GroupWeights(c0, &transformed);
    for (int64_t tile0 = range0; tile0 < range0 + range_tiles; tile0 += part_tiles) {
      ProductsAndOutput(whole, u, c0, tile0, std::min(part_tiles, range0 + range_tiles - tile0), m.get(), image,
                        tiles_w);
    }
  };
  const int64_t tasks = groups * ranges;
  ParallelTasks(ctx, tasks, 2 * kWinogradPoints * tiles * in_width_ * out_width_, run_task);
}

void WinogradConv::RunInParts(const KernelContext& ctx, const WinogradImage& image, int64_t tiles,
                              int64_t tiles_w) const {
  const int64_t in_blocks = in_width_ / kChannelBlock;
  const int64_t groups = CeilDiv(out_width_, kGroupChannels);
  const int64_t parts = CeilDiv(tiles, kMaxTilesPerTask);
  // Float weights: a task per part, every output group on the part's V while it is in cache.
  // 16-bit weights: a task per (core's range of parts, group), which transforms its group's U once
  // and each part's V for it (the input transform costs about a tenth of a group's products).
  const bool transform = u_.size() == 0;
  const int64_t ranges = transform ? std::min<int64_t>(parts, ctx.threads()) : parts;
  const int64_t task_groups = transform ? groups : 1;
  const int64_t xi_stride = in_blocks * kMaxTilesPerTask * kChannelBlock;
  const int64_t tail = (kTilePixels - 1) * kChannelBlock;
  auto run_task = [&](int64_t task) {
    const int64_t range = task / task_groups;
    const int64_t g0 = transform ? task % task_groups : 0, g1 = transform ? g0 + 1 : groups;
    AlignedFloats transformed;
    const float* u_group = transform ? GroupWeights(g0 * kGroupChannels, &transformed) : nullptr;
    AlignedFloats v = AlignedFloats::Make(kWinogradPoints * xi_stride + tail, /*zero=*/false);
    std::fill(v.get() + kWinogradPoints * xi_stride, v.get() + kWinogradPoints * xi_stride + tail, 0.0f);
    AlignedFloats m = AlignedFloats::Make(kWinogradPoints * kGroupChannels * kMaxTilesPerTask, /*zero=*/false);
    for (int64_t part = range * parts / ranges; part < (range + 1) * parts / ranges; ++part) {
      const int64_t tile0 = part * kMaxTilesPerTask, count = std::min(kMaxTilesPerTask, tiles - tile0);
      // The short last part: its last tile group is read whole (zeros, not stale bits).
      if (count < kMaxTilesPerTask) std::fill(v.get(), v.get() + kWinogradPoints * xi_stride, 0.0f);
      for (int64_t block = 0; block < in_blocks; ++block) {
        WinogradInput in = InputOf(image, block, tiles_w);
        in.v = v.get() + block * kMaxTilesPerTask * kChannelBlock;
        in.xi_stride = xi_stride;
        in.first_tile = tile0;
        RunWinogradInput(in, tile0, tile0 + count);
      }
      const TransformedInput part_v{v.get(), xi_stride, kMaxTilesPerTask * kChannelBlock, tile0};
      for (int64_t group = g0; group < g1; ++group) {
        const int64_t c0 = group * kGroupChannels;
        const float* u = transform ? u_group : GroupWeights(c0, nullptr);
        ProductsAndOutput(part_v, u, c0, tile0, count, m.get(), image, tiles_w);
      }
    }
  };
  ParallelTasks(ctx, ranges * task_groups, 2 * kWinogradPoints * tiles * in_width_ * out_width_, run_task);
}

// A task's U comes from the arena that tensors and big scratch share (storage_arena.h), whatever
// its size: the deep layers that have the biggest U (256 input channels: 2.4 MB a group) run when
// the big early activations have been freed, so U fits in their space. From malloc, each core's U
// stayed in its thread's heap: YOLOv8n fp16 at 2 threads held 5.4 MB in the worker's malloc arena
// and 2.4 MB more in the main heap (heaptrack: GroupWeights 4.7 MB at the heap's peak); from the
// arena, its peak RSS went 59.8 -> 56.5 MB at 1 thread, 65.8 -> 60.8 at 2 (real_inception_v1 fp16
// 45.5 -> 44.3, 48.8 -> 46.1). Not the scratch free list either, which would keep one such buffer
// per size for good.
const float* WinogradConv::GroupWeights(int64_t c0, AlignedFloats* transformed) const {
  if (u_.size() != 0) return u_.mutable_data<float>() + c0 * kWinogradPoints * in_width_;
  const int64_t width = std::min(kGroupChannels, out_width_ - c0);
  *transformed = AlignedFloats::FromArena(kWinogradPoints * in_width_ * width);
  TransformGroup(g_, c0, transformed->get());
  return transformed->get();
}

void WinogradConv::ProductsAndOutput(const TransformedInput& v, const float* u, int64_t c0, int64_t tile0,
                                     int64_t count, float* m, const WinogradImage& image, int64_t tiles_w) const {
  const int64_t width = std::min(kGroupChannels, out_width_ - c0);
  const int64_t out_blocks = width / kChannelBlock;
  static const int64_t kNoTapOffset[1] = {0};
  BlockedTile t;
  t.x_block_stride = v.block_stride;
  t.blocks = in_width_ / kChannelBlock;
  t.block_channels = kChannelBlock;
  t.taps = 1;
  t.tap_offsets = kNoTapOffset;
  t.pixel_step = kChannelBlock;
  t.ldw = width;
  t.width = width;
  t.last = true;
  t.y_block_stride = count * kChannelBlock;
  for (int64_t xi = 0; xi < kWinogradPoints; ++xi) {
    t.x = v.v + xi * v.xi_stride;
    t.w = u + xi * in_width_ * width;
    float* m_xi = m + xi * out_blocks * count * kChannelBlock;
    for (int64_t p = 0; p < count; p += kTilePixels) {
      t.base = (tile0 - v.first_tile + p) * kChannelBlock;
      t.pixels = std::min(kTilePixels, count - p);
      t.y = m_xi + p * kChannelBlock;
      RunBlockedTile(t);
    }
  }
  WinogradOutput out;
  out.m = m;
  out.blocks = out_blocks;
  out.tiles = count;
  out.tile0 = tile0;
  out.tiles_w = tiles_w;
  out.height = image.out_rows;
  out.width = image.out_cols;
  const int64_t at = (c0 / kChannelBlock) * image.block_stride * (image.half_y ? sizeof(uint16_t) : sizeof(float));
  out.y = static_cast<char*>(image.y) + at;
  out.residual = image.residual != nullptr ? static_cast<const char*>(image.residual) + at : nullptr;
  out.half = image.half_y;
  out.y_block_stride = image.block_stride;
  out.bias = image.bias != nullptr ? image.bias + c0 : nullptr;
  out.activation = image.activation;
  RunWinogradOutput(out);
}

}  // namespace onnxflow

#endif  // HWY_ONCE
