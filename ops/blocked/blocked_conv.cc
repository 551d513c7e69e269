// com.onnxflow BlockedConv: a 2-D, group-1 float Conv (with FusedConv's activation and residual)
// whose output, and usually input, are channel-blocked (blocked_layout.h).
//
//   inputs: X [N, ceil(C/16), H, W, 16] blocked, or [N, C, H, W] with C < 16 (a network's stem, read
//           as one block of C channels); W [M, C, kh, kw] constant; B constant (optional);
//           Z [N, ceil(M/16), OH, OW, 16] blocked residual (optional)
//           INTO [N, out_blocks, OH, OW, 16] (optional): the tensor to write into (see below)
//           X_SCALE [N, ceil(C/16), 1, 1, 16] blocked, float or float16 (optional): a factor per
//           image and input channel that X is multiplied by first (a squeeze-and-excitation
//           gate, graph/channel_scale_fusion.cc); not for a stem or Winograd
//   output: Y [N, ceil(M/16), OH, OW, 16] = act(conv(X, W) + B + Z)
// With out_blocks (and out_block_offset), Y is [N, out_blocks, OH, OW, 16] and the convolution
// fills blocks [out_block_offset, out_block_offset + ceil(M/16)) of it: convolutions whose outputs
// a channel Concat joins write straight into the joined tensor, each passing it on to the next
// as INTO (graph/blocked_layout.cc). The other blocks are INTO's (or unspecified without INTO).
// INTO is written in place when no other node reads it (KernelContext::ReusableInput), and copied
// first otherwise; so is Z, when it is the output's shape.
// Channel counts that are not multiples of 16 fill their last block with pad lanes. Pad input lanes
// meet zero weights, so only their finiteness matters; pad output lanes hold act(0 + Z's pad).
//   attributes: Conv's, activation / activation_alpha / activation_beta, and output_type: FLOAT
//               (1, the default) or FLOAT16 (10), Y's type, which Z and INTO share
// A blocked X (and Y, Z, INTO) may be float16: a float16 model's activations, stored in its own 16
// bits (graph/blocked_half.cc). The tiles compute in float all the same: each task widens the rows
// of X it reads into scratch, and the tiles narrow Y (and widen Z) in registers.
//
// The weights are packed once, at load, into groups of 64 output channels: [group][input block]
// [tap][channel][64]. A float16 or bfloat16 W (a half model's, graph/half_compute.cc) is packed
// in its own 16 bits, straight from the file's values: half the weight memory of the float
// model, and no float copy of the weights at load; each task widens a chunk at a time (below).
// One task computes a range of output pixels of one image for one group, in tiles of 6 pixels
// (blocked_conv-inl.h); it walks the input channel blocks in chunks whose
// weights stay in L2, adding each chunk into the tiles it already wrote while those are in L2.
#include "ops/blocked/blocked_conv.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/blocked/blocked_conv.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/blocked/blocked_conv-inl.h"

#if HWY_ONCE

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "ops/blocked/blocked_conv_plan.h"
#include "ops/blocked/blocked_conv_tile.h"
#include "ops/blocked/constant_bias.h"
#include "ops/blocked/reorder.h"
#include "ops/blocked/winograd.h"
#include "ops/cast/half_simd.h"
#include "ops/framework/numeric.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/last_plan.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shared_weights.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/float_view.h"
#include "ops/math/fused_activation.h"

namespace onnxflow {

HWY_EXPORT(RunBlockedTileImpl);
HWY_EXPORT(TilePixelsImpl);
HWY_EXPORT(GroupChannelsImpl);
HWY_EXPORT(ScaleBlocksImpl);

void RunBlockedTile(const BlockedTile& tile) { HWY_DYNAMIC_DISPATCH(RunBlockedTileImpl)(tile); }

void WidenWeights(const void* weights, WeightType type, int64_t n, float* out) {
  const uint16_t* bits = static_cast<const uint16_t*>(weights);
  if (type == WeightType::kFloat16) {
    HalfToFloatArray(bits, out, n);  // F16C where the CPU has it
  } else if (type == WeightType::kBFloat16) {
    BFloat16ToFloatArray(bits, out, n);
  } else {
    std::copy_n(static_cast<const float*>(weights), n, out);
  }
}

int64_t BlockedTilePixels(int64_t width) { return HWY_DYNAMIC_DISPATCH(TilePixelsImpl)(width); }

namespace {

// A chunk of input blocks whose weights for one group take at most half of the core's L2 (512 KB
// where the OS does not say), the rest holding the image rows and the outputs. Each chunk after
// the first reloads and stores the tiles' accumulators, so fewer, longer passes win while the
// weights stay in L2: on Zen 4 (1 MB L2) 32 KB chunks cost ResNet-50's convolutions 6%, 64 KB
// chunks a 3x3 256-channel layer 8%; a quarter, half or all of L2 measure alike.
// A group of 16 channels (AVX2's, GroupChannelsImpl) takes half of L1 instead: its tile does half
// the multiply-adds per weight line that AVX-512's does, and reading the chunk from L2 for every
// tile held deep pointwise layers back. Eight 320 <-> 960 layers at 7x7 on Zen 3, one thread:
// 4.0 -> 3.5 ms, better in 9 rounds of 10 (alternated, 100 runs each).
int64_t ChunkWeightBytes(int64_t group_channels) {
  static const int64_t l2_bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<int64_t>(l2) / 2 : int64_t{512} * 1024;
  }();
  static const int64_t l1_bytes = [] {
    const long l1 = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    return l1 > 0 ? static_cast<int64_t>(l1) / 2 : int64_t{16} * 1024;
  }();
  return group_channels <= kChannelBlock ? l1_bytes : l2_bytes;
}
class BlockedConvKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(ConvAttributes attrs, ParseConvAttributes(info));
    ONNXFLOW_ASSIGN_OR_RETURN(ActivationSpec activation, ParseFusedActivation(info));
    const Tensor* w = info.constant_input(1);
    if (w == nullptr || !WeightTypeOf(w->dtype()) || w->rank() != 4) {
      return InvalidArgument("BlockedConv: W must be a constant float, float16 or bfloat16 [M, C, kh, kw]");
    }
    const int64_t m = w->dim(0), c = w->dim(1);
    if (m == 0 || c == 0 || w->dim(2) == 0 || w->dim(3) == 0 || !BlockedConvRunsGroups(attrs.group, w->shape())) {
      return InvalidArgument("BlockedConv: needs channels, a kernel and group 1 or groups it runs, got W " +
                             ShapeToString(w->shape()) + ", group " + std::to_string(attrs.group));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ConstantBias(info, "BlockedConv", m));
    const int64_t y_type = info.GetInt("output_type", static_cast<int64_t>(DataType::kFloat));
    if (y_type != static_cast<int64_t>(DataType::kFloat) && y_type != static_cast<int64_t>(DataType::kFloat16)) {
      return InvalidArgument("BlockedConv: output_type must be FLOAT (1) or FLOAT16 (10), got " + std::to_string(y_type));
    }
    auto kernel = std::unique_ptr<BlockedConvKernel>(new BlockedConvKernel(std::move(attrs), activation, *w, b));
    kernel->y_type_ = static_cast<DataType>(y_type);
    const int64_t own = kernel->out_width_ / kChannelBlock;
    const BlockedConvSpec spec = BlockedConvSpec::Parse(info);
    kernel->out_blocks_ = spec.joined() ? spec.out_blocks : own;
    kernel->block_offset_ = spec.out_block_offset;
    if (kernel->block_offset_ < 0 || kernel->out_blocks_ - kernel->block_offset_ < own ||
        (kernel->out_blocks_ != own && m % kChannelBlock != 0)) {
      return InvalidArgument("BlockedConv: out_block_offset " + std::to_string(kernel->block_offset_) +
                             " and out_blocks " + std::to_string(kernel->out_blocks_) + " do not hold " +
                             std::to_string(m) + " whole blocks of output channels");
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  // W and B live packed in the kernel.
  bool ReadsAtRun(int input) const override { return input != 1 && input != 2; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat && (stem_ || x->dtype() != DataType::kFloat16)) {
      return InvalidArgument(stem_ ? "BlockedConv: input 'X' of a stem must be float"
                                   : "BlockedConv: input 'X' must be float or float16");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(std::shared_ptr<const BlockedConvPlan> plan, PlanFor(x->shape(), ctx.threads()));
    const ConvGeometry& g = plan->geometry;
    const Shape own_shape = {g.batch, out_width_ / kChannelBlock, g.out_spatial[0], g.out_spatial[1], kChannelBlock};
    const Tensor* z = ctx.input_tensor(3);
    if (z != nullptr && (z->dtype() != y_type_ || z->shape() != own_shape)) {
      return InvalidArgument("BlockedConv: residual 'Z' must be " + std::string(DataTypeName(y_type_)) + " of the output's shape " +
                             ShapeToString(own_shape) + ", got " + DataTypeName(z->dtype()) + " " +
                             ShapeToString(z->shape()));
    }
    const Tensor* x_scale = ctx.input_tensor(5);
    if (x_scale != nullptr) {
      const Shape want = {g.batch, blocks_, 1, 1, kChannelBlock};
      if ((x_scale->dtype() != DataType::kFloat && x_scale->dtype() != DataType::kFloat16) ||
          x_scale->shape() != want || stem_ || plan->path == BlockedConvPlan::Path::kWinograd) {
        return InvalidArgument("BlockedConv: input 'X_SCALE' must be float or float16 " + ShapeToString(want) +
                               " (and the convolution neither a stem nor Winograd's), got " +
                               DataTypeName(x_scale->dtype()) + " " + ShapeToString(x_scale->shape()));
      }
    }
    Shape y_shape = own_shape;
    y_shape[1] = out_blocks_;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor y_tensor, Output(ctx, y_shape, z));
    if (y_tensor.size() == 0) return Status::Ok();
    if (plan->path == BlockedConvPlan::Path::kWinograd) {
      RunWinograd(ctx, g, *x, z, &y_tensor);
    } else {
      RunDirect(ctx, *plan, *x, z, x_scale, &y_tensor);
    }
    return Status::Ok();
  }

 private:
  // The plan for input shape `x` on `threads` cores: the last one made, when it is for the same
  // shape, cores and SIMD target; else a new one (after checking the shape), kept for the next call.
  Result<std::shared_ptr<const BlockedConvPlan>> PlanFor(const Shape& x, int threads) const {
    const int64_t tile_pixels = BlockedTilePixels(std::min(group_channels_, out_width_));
    if (auto plan = last_plan_.Find([&](const BlockedConvPlan& p) { return p.For(x, threads, tile_pixels); })) {
      return plan;
    }
    Shape x_nchw;
    if (stem_) {
      if (x.size() != 4) return InvalidArgument("BlockedConv: input 'X' must be [N, C, H, W], got " + ShapeToString(x));
      x_nchw = x;
    } else {
      ONNXFLOW_ASSIGN_OR_RETURN(
          x_nchw, UnblockedShapeOfBlocks(x, "X", blocks_, "BlockedConv", "W " + ShapeToString(w_shape_)));
      x_nchw[1] = channels_;
    }
    ONNXFLOW_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs_, x_nchw, w_shape_));
    auto plan = std::make_shared<const BlockedConvPlan>(MakeBlockedConvPlan(layout_, x, g, threads, tile_pixels));
    last_plan_.Store(plan);
    return plan;
  }

  BlockedConvLayout Layout() const {
    BlockedConvLayout l;
    l.in_width = in_width_;
    l.out_width = out_width_;
    l.taps = taps_;
    l.block_channels = block_channels_;
    l.blocks = blocks_;
    l.group_channels = group_channels_;
    l.group_blocks = group_blocks_;
    l.chunk_blocks = chunk_blocks_;
    l.packed_floats = packed_ != nullptr ? packed_->size() : 0;
    l.stem = stem_;
    l.winograd = winograd_ != nullptr;
    return l;
  }

  void RunWinograd(const KernelContext& ctx, const ConvGeometry& g, const Tensor& x, const Tensor* z, Tensor* y) const {
    const int64_t y_width = out_blocks_ * kChannelBlock, y_offset = block_offset_ * kChannelBlock;
    const size_t x_bytes = ElementSize(x.dtype()), y_bytes = ElementSize(y_type_);
    for (int64_t n = 0; n < g.batch; ++n) {
      WinogradImage image;
      image.x = static_cast<const char*>(x.raw_data()) + n * in_width_ * g.in_size() * x_bytes;
      image.half_x = x.dtype() == DataType::kFloat16;
      image.in_rows = g.in_spatial[0];
      image.in_cols = g.in_spatial[1];
      image.top = g.pads_begin[0];
      image.left = g.pads_begin[1];
      image.out_rows = g.out_spatial[0];
      image.out_cols = g.out_spatial[1];
      image.y = static_cast<char*>(y->mutable_raw_data()) + (n * y_width + y_offset) * g.out_size() * y_bytes;
      image.residual =
          z != nullptr ? static_cast<const char*>(z->raw_data()) + n * out_width_ * g.out_size() * y_bytes : nullptr;
      image.half_y = y_type_ == DataType::kFloat16;
      image.block_stride = g.out_size() * kChannelBlock;
      image.bias = bias_.data();
      image.activation = activation_;
      winograd_->Run(ctx, image);
    }
  }

  // The stem reads its few channels pixel by pixel, [H, W, C], from a copy with the padding written
  // out as zeros: the geometry then has no pads, and every tile on one output row reads the image at
  // fixed steps (UniformTile) instead of gathering a 7x7 window's offsets. Each task copies only the
  // rows [r0, r1) of the padded image n that its tiles read (a few rows, in L2), not the whole
  // image: a copy of all of it was the peak of a high-resolution network's run (YOLOv8n at 640,
  // 4.8 MB beside its 6.4 MB first output).
  void InterleaveStemRows(const ConvGeometry& g, const float* xd, int64_t n, int64_t r0, int64_t r1,
                          float* dst) const {
    const int64_t h_in = g.in_spatial[0], w_in = g.in_spatial[1], plane = h_in * w_in;
    const int64_t top = g.pads_begin[0], left = g.pads_begin[1];
    const int64_t row = (w_in + left + g.pads_end[1]) * channels_, inside = w_in * channels_;
    for (int64_t r = r0; r < r1; ++r, dst += row) {
      const int64_t h = r - top;
      if (h < 0 || h >= h_in) {  // a padding row
        std::fill(dst, dst + row, 0.0f);
        continue;
      }
      std::fill(dst, dst + left * channels_, 0.0f);
      InterleaveChannels(xd + n * channels_ * plane + h * w_in, plane, channels_, w_in, channels_, dst + left * channels_);
      std::fill(dst + left * channels_ + inside, dst + row, 0.0f);
    }
  }

  // The rows [first, end) of the (padded) image that output pixels [p0, p1) read.
  static std::pair<int64_t, int64_t> RowsRead(const ConvGeometry& g, int64_t p0, int64_t p1) {
    const int64_t out_w = g.out_spatial[1];
    return {p0 / out_w * g.strides[0], (p1 - 1) / out_w * g.strides[0] + (g.kernel[0] - 1) * g.dilations[0] + 1};
  }

  // Where a task's tiles read X: the group's first input block, blocks `block_stride` apart, at
  // offsets from a block's start less `shift`; `rows` holds a stem's copy of its rows.
  struct TaskInput {
    const float* blocks = nullptr;
    int64_t block_stride = 0, shift = 0;
    AlignedFloats rows;
  };

  // Float scratch that grows to the most a worker's tasks ask of it through one call. (From the
  // arena: the sizes vary by layer, and the free list would keep each. Taken per task, under the
  // arena's lock, YOLOv8n float16 ran 3-6% slower at two threads.)
  struct GrowingFloats {
    AlignedFloats buffer;
    int64_t capacity = 0;

    float* Get(int64_t floats) {
      if (capacity < floats) {
        buffer = AlignedFloats::FromArena(floats);
        capacity = floats;
      }
      return buffer.get();
    }
  };

  // X_SCALE's factors for image n as a chunk of weights reads them: `factors` at the chunk's first
  // input channel, rows of `width` output weights.
  struct ChannelScale {
    const float* factors = nullptr;
    int64_t n = 0, width = 0;
  };

  // A worker's scratch through one call: the rows of a float16 X it widened last, and the float
  // sums of a float16 Y. The worker's next task often reads the same rows for the next group of
  // output channels (a groups-inner plan's tasks run range by range, and TBB hands each worker a
  // run of them). Widened again per group, the conversions cost YOLOv8n float16 about 4% of its
  // run: a pointwise layer's 64 multiply-adds per input value are few against a conversion.
  struct WorkerScratch {
    int64_t n = -1, first_block = -1, r0 = 0, r1 = 0;  // the rows in `rows`
    int64_t weights_at = -1, weights_count = 0, weights_n = -1;  // the weights in `weights` (image
                                                                  // n's, scaled by X_SCALE)
    GrowingFloats rows, sums, weights;
  };

  // The input of the task of image n, input blocks from first_block, output pixels [p0, p1):
  //  - float X: X itself;
  //  - a stem's: the rows its tiles read, interleaved and padded (InterleaveStemRows);
  //  - float16 X: the rows its tiles read of the group's blocks, widened into the worker's
  //    scratch, unless they are the rows it widened last.
  //  - with `factors` (X_SCALE's, as floats), the rows times their channels' factors, the same way.
  TaskInput InputOfTask(const BlockedConvPlan& plan, const Tensor& x, int64_t n, int64_t first_block, int64_t p0,
                        int64_t p1, WorkerScratch* scratch, const float* factors) const {
    const ConvGeometry& g = plan.tile_geometry;
    TaskInput in;
    const int64_t in_pixels = g.in_size();
    in.block_stride = in_pixels * kChannelBlock;
    if (stem_) {
      // (From the free list, whose few sizes it keeps: taken per task from the arena, under its
      // lock, a 3 x 1024 x 1024 stem at two threads took 5.9-6.3 ms against 5.3-5.7 ms with the
      // whole copy; from the free list, 5.2-5.5 ms.)
      const auto [r0, r1] = RowsRead(g, p0, p1);
      const int64_t row = g.in_spatial[1] * channels_;
      in.rows = AlignedFloats::Make((r1 - r0) * row, /*zero=*/false);
      InterleaveStemRows(plan.geometry, x.data<float>(), n, r0, r1, in.rows.get());
      in.blocks = in.rows.get();
      in.shift = r0 * row;
      return in;
    }
    if (x.dtype() == DataType::kFloat && factors == nullptr) {
      in.blocks = x.data<float>() + (n * blocks_ + first_block) * in.block_stride;
      return in;
    }
    // The image's rows, unpadded: the padding reads as nothing (offsets -1). A pointwise layer's
    // input pixels are its output pixels: just those, not their whole rows (a task of 120 pixels
    // of a 56-wide map spans 3 rows, 168 pixels).
    auto [r0, r1] = RowsRead(g, p0, p1);
    r0 = std::clamp<int64_t>(r0 - g.pads_begin[0], 0, g.in_spatial[0]);
    r1 = std::clamp<int64_t>(r1 - g.pads_begin[0], r0, g.in_spatial[0]);
    int64_t row = g.in_spatial[1] * kChannelBlock;
    if (plan.pointwise) std::tie(r0, r1, row) = std::make_tuple(p0, p1, kChannelBlock);
    const int64_t count = (r1 - r0) * row;
    const int64_t x_at = (n * blocks_ + first_block) * in.block_stride + r0 * row;  // in X's elements
    const int64_t x_block_stride = in.block_stride;
    in.block_stride = count;
    in.shift = r0 * row;
    float* rows = scratch->rows.Get(std::max<int64_t>(group_blocks_ * count, kChannelBlock));
    in.blocks = rows;
    if (scratch->n == n && scratch->first_block == first_block && scratch->r0 == r0 && scratch->r1 == r1) return in;
    scratch->n = n;
    scratch->first_block = first_block;
    scratch->r0 = r0;
    scratch->r1 = r1;
    const bool half = x.dtype() == DataType::kFloat16;
    if (factors != nullptr) {
      const void* at = static_cast<const char*>(x.raw_data()) + x_at * ElementSize(x.dtype());
      HWY_DYNAMIC_DISPATCH(ScaleBlocksImpl)(at, half, x_block_stride, group_blocks_, count,
                                            factors + (n * blocks_ + first_block) * kChannelBlock, rows);
      return in;
    }
    const uint16_t* x16 = x.data<uint16_t>() + x_at;
    for (int64_t b = 0; b < group_blocks_; ++b) HalfToFloatArray(x16 + b * x_block_stride, rows + b * count, count);
    return in;
  }

  // 16-bit weights [at, at + count) widened to float in the worker's scratch, which stays in L2 for
  // the task's tiles, unless they are the weights it widened last: a ranges-inner plan's tasks run
  // the ranges of one group in a row, so a group whose weights are one chunk is widened once per
  // worker, not once per range. (Widened in the tiles, once per input channel of 6 pixels, the
  // conversions took the FMA units' cycles: real_inception_v1 fp16 ran 1.2x its float model's
  // time.) The buffer grows through the call, as the rows do, and goes back to the arena after
  // it. (The free list kept one of ChunkWeightBytes per core for good, in each thread's malloc
  // heap: YOLOv8n fp16 at 2 threads, peak RSS 61.5 -> 60.4 MB, medians of 3.)
  //
  // With `scale` (X_SCALE, where RunDirect puts it into the weights), the chunk of image n is
  // scaled by its input channels' factors as well: conv(X * s, W) = conv(X, W * s).
  const float* WidenedChunk(WeightType type, int64_t at, int64_t count, WorkerScratch* scratch,
                            const ChannelScale* scale = nullptr) const {
    float* out = scratch->weights.Get(count);
    const int64_t scaled_n = scale != nullptr ? scale->n : -1;
    if (scratch->weights_at == at && scratch->weights_count == count && scratch->weights_n == scaled_n) return out;
    WidenWeights(packed_->at(at), type, count, out);
    scratch->weights_at = at;
    scratch->weights_count = count;
    scratch->weights_n = scaled_n;
    if (scale != nullptr) {
      // The chunk is [block][tap][channel][width]: each input channel's row of `width` output
      // weights takes that channel's factor.
      const int64_t rows = count / scale->width;
      for (int64_t r = 0; r < rows; ++r) {
        const int64_t block = r / (taps_ * block_channels_), channel = r % block_channels_;
        const float f = scale->factors[block * kChannelBlock + channel];
        float* w = out + r * scale->width;
        for (int64_t j = 0; j < scale->width; ++j) w[j] *= f;
      }
    }
    return out;
  }

  // The direct tiles: every task of the plan, over the cores. A float16 Y (and Z) the tiles
  // narrow (and widen) in registers.
  void RunDirect(const KernelContext& ctx, const BlockedConvPlan& plan, const Tensor& x, const Tensor* z,
                 const Tensor* x_scale, Tensor* y) const {
    const ConvGeometry& g = plan.tile_geometry;
    const int64_t y_width = out_blocks_ * kChannelBlock, y_offset = block_offset_ * kChannelBlock;
    const int64_t out_pixels = g.out_size();
    const int64_t y_block_stride = out_pixels * kChannelBlock;
    const int64_t tile_pixels = plan.tile_pixels, groups = plan.groups, ranges = plan.ranges;
    const bool half_y = y_type_ == DataType::kFloat16;
    const WeightType type = packed_->type();
    const int64_t weight_bytes = WeightBytes(type);
    const char* packed_end = static_cast<const char*>(packed_->at(packed_->size()));
    // X_SCALE goes into the weights, a task's chunk at a time, or into X, a task's rows at a time
    // (as a float16 X is widened), whichever multiplies fewer values: the weights on a large map's
    // few channels (32 -> 16 at 112 x 112), X on a small map's many (1152 -> 192 at 7 x 7: 1.3M
    // weights over its tasks against 56K values of X). Scaling the weights everywhere made
    // EfficientNet-B0 6-9% slower than the Mul it replaced; choosing, 3-5% faster (1 thread).
    std::optional<FloatIn> factors;  // [N][blocks_ * 16]
    bool scale_x = false;
    if (x_scale != nullptr) {
      factors.emplace(*x_scale);
      const int64_t group_weights_count = group_blocks_ * taps_ * block_channels_ * group_channels_;
      // X's rows are scaled once per worker while its tasks read the same rows (InputOfTask): a
      // groups-inner plan, or a ranges-inner one of a single range; else once per group.
      const bool rows_once = plan.groups_inner || plan.ranges == 1;
      const int64_t x_values = g.batch * g.in_size() * blocks_ * kChannelBlock * (rows_once ? 1 : groups);
      scale_x = plan.tasks * group_weights_count > x_values;
    }
    const float* x_factors = scale_x ? factors->data : nullptr;
    const float* w_factors = factors && !scale_x ? factors->data : nullptr;
    std::vector<WorkerScratch> workers(
        x.dtype() == DataType::kFloat16 || half_y || type != WeightType::kFloat || x_scale != nullptr ? WorkerSlots()
                                                                                                    : 0);
    auto run_task = [&](int64_t task) {
      const int64_t n = task / (ranges * groups), rest = task % (ranges * groups);
      const int64_t range = plan.groups_inner ? rest / groups : rest % ranges;
      const int64_t group = plan.groups_inner ? rest % groups : rest / ranges;
      const auto [tile0, tile1] = plan.RangeTiles(range);
      const int64_t c0 = group * group_channels_, width = std::min(group_channels_, out_width_ - c0);
      const int64_t task_p0 = tile0 * tile_pixels, task_p1 = std::min(tile1 * tile_pixels, out_pixels);
      // The input blocks this group reads: all of them, or a grouped convolution's own.
      const int64_t first_block = group_ > 1 ? group * group_blocks_ : 0;
      // This worker's scratch, or the task's own off the workers (a call made outside TBB's).
      const int slot = WorkerSlot();
      WorkerScratch own;
      WorkerScratch* scratch = slot >= 0 && slot < static_cast<int>(workers.size()) ? &workers[slot] : &own;
      const TaskInput input = InputOfTask(plan, x, n, first_block, task_p0, task_p1, scratch, x_factors);
      std::vector<int64_t> offsets(static_cast<size_t>(taps_ * tile_pixels)), live_taps(static_cast<size_t>(taps_));
      BlockedTile t;
      t.x_block_stride = input.block_stride;
      t.tap_offsets = plan.uniform_taps.data();
      t.ldw = width;
      t.width = width;
      t.real_width = out_channels_ - c0 < width ? out_channels_ - c0 : 0;
      t.bias = bias_.data() + c0;
      t.activation = activation_;
      t.tile_pixels = tile_pixels;
      // Output block b of the group, pixel p at y_at + b * t.y_block_stride + (p - y_p0) * 16. A
      // float16 Y is stored by the tiles of the last chunk; the earlier chunks of a deep layer sum
      // into float scratch of the task's pixels, which the last one reads.
      const int64_t y_first = (n * y_width + y_offset + c0) * out_pixels;  // in Y's elements
      const int64_t z_first = (n * out_width_ + c0) * out_pixels;
      float* y_at = nullptr;
      int64_t y_p0 = 0;
      if (!half_y) {
        y_at = y->mutable_data<float>() + y_first;
        t.y_block_stride = y_block_stride;
      } else if (group_blocks_ > chunk_blocks_) {
        const int64_t task_floats = (task_p1 - task_p0) * kChannelBlock;
        y_at = scratch->sums.Get(width / kChannelBlock * task_floats);
        y_p0 = task_p0;
        t.y_block_stride = task_floats;
      }
      t.y_half_block_stride = y_block_stride;
      uint16_t* y_half_at = half_y ? y->mutable_data<uint16_t>() + y_first : nullptr;
      const float* z_at = z != nullptr && !half_y ? z->data<float>() + z_first : nullptr;
      const uint16_t* z_half_at = z != nullptr && half_y ? z->data<uint16_t>() + z_first : nullptr;
      const int64_t group_weights = c0 * group_blocks_ * block_channels_ * taps_;
      for (int64_t b0 = 0; b0 < group_blocks_; b0 += chunk_blocks_) {
        t.blocks = std::min(chunk_blocks_, group_blocks_ - b0);
        t.x = input.blocks + b0 * input.block_stride;
        const int64_t chunk_at = group_weights + b0 * taps_ * block_channels_ * width;
        const int64_t chunk_weights = t.blocks * taps_ * block_channels_ * width;
        if (w_factors != nullptr) {
          const ChannelScale scale{w_factors + (n * blocks_ + first_block + b0) * kChannelBlock, n, width};
          t.w = WidenedChunk(type, chunk_at, chunk_weights, scratch, &scale);
        } else if (type == WeightType::kFloat) {
          t.w = static_cast<const float*>(packed_->at(chunk_at));
        } else {
          t.w = WidenedChunk(type, chunk_at, chunk_weights, scratch);
        }
        t.accumulate = b0 > 0;
        t.last = b0 + t.blocks == group_blocks_;
        const int64_t tail = t.last ? tail_channels_ : 0;
        // The weights after this chunk's (the next chunk, or the next group's first), a share per
        // tile, in whole cache lines.
        const int64_t chunk_bytes = t.blocks * taps_ * block_channels_ * width * weight_bytes;
        const char* next = static_cast<const char*>(packed_->at(chunk_at)) + chunk_bytes;
        const int64_t next_bytes = std::min<int64_t>(chunk_bytes, packed_end - next);
        const int64_t share = ((next_bytes + tile1 - tile0 - 1) / (tile1 - tile0) + 63) / 64 * 64;
        // A pointwise layer's whole tiles go in runs (BlockedTile::tiles); the others one by one.
        const int64_t whole_tiles = out_pixels / tile_pixels;
        for (int64_t tile = tile0; tile < tile1; tile += t.tiles) {
          t.tiles = plan.pointwise && tile < whole_tiles ? std::min(tile1, whole_tiles) - tile : 1;
          const int64_t done = (tile - tile0) * share;
          t.prefetch = next + std::min(done, next_bytes);
          t.prefetch_bytes = std::max<int64_t>(0, std::min(share * t.tiles, next_bytes - done));
          const int64_t p0 = tile * tile_pixels;
          t.pixels = std::min(tile_pixels, out_pixels - p0);
          if (UniformTile(g, plan.pointwise, p0, t.pixels, tile_pixels, plan.pixel_stride, &t.base, &t.pixel_step)) {
            t.base -= input.shift;
            t.offsets = nullptr;
            t.taps = static_cast<int64_t>(plan.uniform_taps.size());
            t.block_channels = plan.uniform_channels;
            t.tail_channels = t.block_channels == kChannelBlock ? tail : 0;  // not a merged kernel row
          } else {
            FillOffsets(g, p0, t.pixels, tile_pixels, plan.pixel_stride, offsets.data());
            if (input.shift > 0) {
              for (int64_t& o : offsets) o = o >= 0 ? o - input.shift : o;
            }
            t.offsets = offsets.data();
            t.live_taps = live_taps.data();
            t.live_count = LiveTaps(offsets.data(), taps_, tile_pixels, live_taps.data());
            t.taps = taps_;
            t.block_channels = block_channels_;
            t.tail_channels = tail;
          }
          t.y = y_at != nullptr ? y_at + (p0 - y_p0) * kChannelBlock : nullptr;
          t.residual = b0 == 0 && z_at != nullptr ? z_at + p0 * kChannelBlock : nullptr;
          t.y_half = y_half_at != nullptr ? y_half_at + p0 * kChannelBlock : nullptr;
          t.residual_half = b0 == 0 && z_half_at != nullptr ? z_half_at + p0 * kChannelBlock : nullptr;
          RunBlockedTile(t);
        }
      }
      // The pad lanes of the last block: zeros, whether the tiles computed them or skipped them.
      if (t.real_width > 0) {
        const int64_t block = t.real_width / kChannelBlock, lane0 = t.real_width % kChannelBlock;
        float* const y_float = y_half_at == nullptr ? y->mutable_data<float>() + y_first : nullptr;
        for (int64_t p = task_p0; p < task_p1; ++p) {
          const int64_t at = block * y_block_stride + p * kChannelBlock;
          if (y_float == nullptr) {
            std::fill(y_half_at + at + lane0, y_half_at + at + kChannelBlock, uint16_t{0});
          } else {
            std::fill(y_float + at + lane0, y_float + at + kChannelBlock, 0.0f);
          }
        }
      }
    };
    ParallelTasks(ctx, plan.tasks, plan.work, run_task);
  }

  // The output, in the first of these that applies:
  //  - INTO itself, when this node may write into it (ReusableInput: the previous convolution of
  //    a joined Concat), or else a copy of it;
  //  - the residual Z itself, when this node may write into it: a residual block's sum takes the
  //    place of the shortcut it adds, which saves the output's trip from memory (the tiles read
  //    the residual before they write);
  //  - fresh storage.
  // (A Tensor shares its storage: the returned one writes into the output.)
  Result<Tensor> Output(KernelContext& ctx, const Shape& y_shape, const Tensor* z) const {
    if (ctx.has_input(4)) {
      const Tensor* into = ctx.input_tensor(4);
      if (into == nullptr || into->dtype() != y_type_ || into->shape() != y_shape) {
        return InvalidArgument("BlockedConv: input 'INTO' must be " + std::string(DataTypeName(y_type_)) + " " +
                               ShapeToString(y_shape) + ", got " +
                               (into != nullptr ? std::string(DataTypeName(into->dtype())) + " " + ShapeToString(into->shape())
                                                : std::string("no tensor")));
      }
      if (Tensor* reusable = ctx.ReusableInput(4)) {
        ctx.SetOutput(0, *reusable);
        return *reusable;
      }
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, y_type_, y_shape));
      if (y->size() > 0) std::memcpy(y->mutable_raw_data(), into->raw_data(), into->nbytes());
      return *y;
    }
    if (z != nullptr && z->shape() == y_shape) {
      if (Tensor* reusable = ctx.ReusableInput(3)) {
        ctx.SetOutput(0, *reusable);
        return *reusable;
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, y_type_, y_shape));
    return *y;
  }

  BlockedConvKernel(ConvAttributes attrs, ActivationSpec activation, const Tensor& w, const Tensor* b)
      : attrs_(std::move(attrs)),
        activation_(activation),
        w_shape_(w.shape()),
        out_channels_(w.dim(0)),
        channels_(w.dim(1) * attrs_.group),
        taps_(w.dim(2) * w.dim(3)),
        group_(attrs_.group),
        stem_(channels_ < kChannelBlock),
        block_channels_(stem_ ? channels_ : kChannelBlock),
        blocks_((channels_ + block_channels_ - 1) / block_channels_),
        in_width_(blocks_ * block_channels_),
        out_width_((out_channels_ + kChannelBlock - 1) / kChannelBlock * kChannelBlock),
        group_channels_(group_ > 1 ? std::max(kChannelBlock, w.dim(1)) : HWY_DYNAMIC_DISPATCH(GroupChannelsImpl)()),
        group_blocks_(group_ > 1 ? group_channels_ / kChannelBlock : blocks_),
        tail_channels_(group_ == 1 && !stem_ ? channels_ % kChannelBlock : 0),
        bias_(static_cast<size_t>(out_width_), 0.0f) {
    if (b != nullptr) std::copy(b->data<float>(), b->data<float>() + out_channels_, bias_.begin());
    const WeightType type = *WeightTypeOf(w.dtype());
    if (WinogradConv::Applies(attrs_, w_shape_)) {
      // Shared with every other kernel (of any session) whose weights have the same bytes and shape.
      winograd_ = SharedWeights::Get<WinogradConv>(WeightKey("BlockedConv.winograd").Add(w), [&] {
        return WinogradConv(w.raw_data(), type, out_channels_, channels_, in_width_, out_width_);
      });
      layout_ = Layout();
      return;
    }
    // (In float bytes for 16-bit weights too: a chunk of them is widened before the tiles read it.)
    const int64_t block_bytes = taps_ * block_channels_ * group_channels_ * static_cast<int64_t>(sizeof(float));
    // As many chunks as the budget needs, of equal size: 8 blocks under a budget of 7 are two
    // passes of 4, not a pass of 7 and one of 1 that reloads every accumulator for 1/8 of the work.
    const int64_t most = std::max<int64_t>(1, ChunkWeightBytes(group_channels_) / block_bytes);
    const int64_t chunks = (group_blocks_ + most - 1) / most;
    chunk_blocks_ = (group_blocks_ + chunks - 1) / chunks;
    // The layout depends on W's shape and type and the groups (which are in the key).
    packed_ = SharedWeights::Get<PackedWeights>(WeightKey("BlockedConv.direct").Add(w).Add(group_).Add(group_channels_), [&] {
      PackedWeights packed(type, out_width_ * group_blocks_ * block_channels_ * taps_);
      if (type == WeightType::kFloat) {
        PackDirect(w.data<float>(), packed.mutable_data<float>());
      } else {  // float16 and bfloat16 alike: their bits are moved, not converted (+0 is 0 in both)
        PackDirect(static_cast<const uint16_t*>(w.raw_data()), packed.mutable_data<uint16_t>());
      }
      return packed;
    });
    layout_ = Layout();
  }

  // [group][block][tap][channel][group width], a group's own input blocks only; only the last
  // group may be narrower than group_channels_. Pad channels, in and out, get zero weights, and so
  // do the pairs of a grouped convolution's block that belong to different groups of the Conv.
  template <class T>
  void PackDirect(const T* wd, T* dst) const {
    const int64_t in_group = w_shape_[1], out_group = out_channels_ / group_;  // channels per Conv group
    for (int64_t c0 = 0; c0 < out_width_; c0 += group_channels_) {
      const int64_t width = std::min(group_channels_, out_width_ - c0);
      const int64_t first_block = group_ > 1 ? c0 / group_channels_ * group_blocks_ : 0;
      for (int64_t block = first_block; block < first_block + group_blocks_; ++block) {
        for (int64_t tap = 0; tap < taps_; ++tap) {
          for (int64_t ci = 0; ci < block_channels_; ++ci) {
            const int64_t c = block * block_channels_ + ci;
            for (int64_t col = 0; col < width; ++col) {
              const int64_t m = c0 + col;
              const bool real = m < out_channels_ && c < channels_ && c / in_group == m / out_group;
              *dst++ = real ? wd[(m * in_group + c % in_group) * taps_ + tap] : T{0};
            }
          }
        }
      }
    }
  }

  // Whether the full tile starting at output pixel p0 lies on one output row with every tap inside
  // the image (or the convolution is `pointwise`, where the rows join up); if so, where its first
  // pixel's window starts and how far apart its pixels are.
  static bool UniformTile(const ConvGeometry& g, bool pointwise, int64_t p0, int64_t pixels, int64_t tile_pixels,
                          int64_t pixel_stride, int64_t* base, int64_t* step) {
    if (pixels != tile_pixels) return false;
    const int64_t out_w = g.out_spatial[1], in_h = g.in_spatial[0], in_w = g.in_spatial[1];
    if (pointwise) {
      *base = p0 * pixel_stride;
      *step = pixel_stride;
      return true;
    }
    const int64_t oh = p0 / out_w, ow = p0 % out_w;
    if (ow + tile_pixels > out_w) return false;
    const int64_t ih = oh * g.strides[0] - g.pads_begin[0], iw = ow * g.strides[1] - g.pads_begin[1];
    const int64_t iw_last = iw + (tile_pixels - 1) * g.strides[1] + (g.kernel[1] - 1) * g.dilations[1];
    if (ih < 0 || ih + (g.kernel[0] - 1) * g.dilations[0] >= in_h || iw < 0 || iw_last >= in_w) return false;
    *base = (ih * in_w + iw) * pixel_stride;
    *step = g.strides[1] * pixel_stride;
    return true;
  }

  // Where each pixel of the tile starting at output pixel p0 reads each tap (see BlockedTile).
  static void FillOffsets(const ConvGeometry& g, int64_t p0, int64_t pixels, int64_t tile_pixels, int64_t pixel_stride,
                          int64_t* offsets) {
    const int64_t out_w = g.out_spatial[1], in_h = g.in_spatial[0], in_w = g.in_spatial[1];
    const int64_t kh_n = g.kernel[0], kw_n = g.kernel[1];
    int64_t oh = p0 / out_w, ow = p0 % out_w;
    for (int64_t i = 0; i < tile_pixels; ++i, ++ow) {
      if (ow == out_w) {
        ow = 0;
        ++oh;
      }
      if (i >= pixels) {
        for (int64_t tap = 0; tap < kh_n * kw_n; ++tap) offsets[tap * tile_pixels + i] = -1;
        continue;
      }
      const int64_t ih0 = oh * g.strides[0] - g.pads_begin[0], iw0 = ow * g.strides[1] - g.pads_begin[1];
      for (int64_t kh = 0; kh < kh_n; ++kh) {
        const int64_t ih = ih0 + kh * g.dilations[0];
        for (int64_t kw = 0; kw < kw_n; ++kw) {
          const int64_t iw = iw0 + kw * g.dilations[1];
          const bool inside = ih >= 0 && ih < in_h && iw >= 0 && iw < in_w;
          offsets[(kh * kw_n + kw) * tile_pixels + i] = inside ? (ih * in_w + iw) * pixel_stride : -1;
        }
      }
    }
  }

  // The taps of which some pixel of the tile reads inside the image (FillOffsets' offsets are -1
  // in the padding), into `live`; returns how many.
  static int64_t LiveTaps(const int64_t* offsets, int64_t taps, int64_t tile_pixels, int64_t* live) {
    int64_t count = 0;
    for (int64_t tap = 0; tap < taps; ++tap) {
      const int64_t* off = offsets + tap * tile_pixels;
      if (std::any_of(off, off + tile_pixels, [](int64_t o) { return o >= 0; })) live[count++] = tap;
    }
    return count;
  }

  ConvAttributes attrs_;
  ActivationSpec activation_;
  Shape w_shape_;
  int64_t out_channels_, channels_, taps_;
  int64_t group_;  // the Conv's groups (BlockedConvRunsGroups)
  bool stem_;
  int64_t block_channels_, blocks_;
  int64_t in_width_, out_width_;  // channels with their pad lanes
  // Output channels per group of packed weights and task, and the input blocks each reads.
  int64_t group_channels_, group_blocks_;
  // The real channels of the last input block when it has pad lanes (a 24-channel layer's 8), else
  // 0: the tiles skip the pad lanes' zero weights (BlockedTile::tail_channels).
  int64_t tail_channels_;
  int64_t chunk_blocks_ = 1;
  int64_t out_blocks_ = 0, block_offset_ = 0;  // the output's channel blocks, and where ours start
  DataType y_type_ = DataType::kFloat;           // Y's, Z's and INTO's (output_type)
  std::vector<float> bias_;
  // Both shared by content across kernels and sessions (shared_weights.h).
  std::shared_ptr<const PackedWeights> packed_;  // the direct tiles' weights (see the header), or
  std::shared_ptr<const WinogradConv> winograd_;  // a 3x3 stride-1 convolution's (winograd.h)
  BlockedConvLayout layout_;  // what the plans read of the above
  LastPlan<BlockedConvPlan> last_plan_;
};

}  // namespace

bool BlockedConvRunsGroups(int64_t group, const Shape& w) {
  if (group == 1) return true;
  if (group < 1 || w.size() != 4 || w[0] % group != 0) return false;
  const int64_t width = w[1];
  const bool divides_a_block = width >= 2 && kChannelBlock % width == 0;
  const bool whole_blocks = width % kChannelBlock == 0 && width <= kGroupChannels;
  return w[0] / group == width && (divides_a_block || whole_blocks) && width * group >= kChannelBlock;
}

void BlockedConvSpec::WriteTo(onnx::NodeProto& node) const {
  if (!joined()) {
    RemoveAttribute(node, "out_blocks");
    RemoveAttribute(node, "out_block_offset");
    return;
  }
  SetAttribute(node, "out_blocks", out_blocks);
  SetAttribute(node, "out_block_offset", out_block_offset);
}

BlockedConvSpec BlockedConvSpec::Parse(const KernelInfo& info) {
  return BlockedConvSpec{info.GetInt("out_blocks", 0), info.GetInt("out_block_offset", 0)};
}

ONNXFLOW_REGISTRAR Status RegisterBlockedConv(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kBlockedConv, internal_ops::kVersion, kOpenEnded, BlockedConvKernel::Create);
}

}  // namespace onnxflow

#endif  // HWY_ONCE
