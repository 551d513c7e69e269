// com.onnxflow BlockedConvTranspose: a 2-D, group-1 float ConvTranspose (with an epilogue
// activation) whose input and output are channel-blocked (blocked_layout.h).
//
//   inputs: X [N, ceil(C/16), H, W, 16] blocked; W [C, M, kh, kw] constant; B [M] constant (optional)
//   output: Y [N, ceil(M/16), OH, OW, 16] = act(conv_transpose(X, W) + B)
//   attributes: ConvTranspose's (strides, pads, dilations, output_padding, output_shape, auto_pad,
//               group 1), and activation / activation_alpha / activation_beta
//
// As output phases: output row oh = ph + s * i reads input row ih = (oh + pad - kh * d) / s of
// each tap row kh where that divides, i.e. ih = i + (ph + pad - kh * d) / s for the kh of one
// residue of (ph + pad) mod s. So each of the s_h x s_w phases is an ordinary stride-1 convolution
// of the input by its own taps, writing every s-th output pixel: the blocked convolution's tile
// (blocked_conv-inl.h) computes it, its output pixels y_pixel_stride = s_w * 16 floats apart. No
// column buffer and no scatter: the plain kernel's GEMM + Col2Im over a U-Net's or a style
// network's up-sampling writes and re-reads the k^2 / s^2-times larger col (see the README's
// upsample cases), and a blocked network would also reorder out and back in around it.
//
// The weights are packed once, at load, per residue pair (rh, rw) of the taps: [group of 64]
// [input block][tap of the residue][channel][64], the residue's taps row-major in (kh, kw). Pad
// channels, in and out, get zero weights; pad output lanes hold act(0).
#include "ops/blocked/blocked_conv_transpose.h"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ops/blocked/blocked_conv_tile.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/constant_bias.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shared_weights.h"
#include "ops/math/conv_transpose_geometry.h"
#include "ops/math/fused_activation.h"

namespace onnxflow {
namespace {

// Tiles per task at most: the task's outputs stay in L2 between chunks of input blocks (as
// BlockedConv's kMaxTilesPerTask); tasks per core when split: as BlockedConv's kTasksPerCore.
constexpr int64_t kMaxTilesPerTask = 128;
constexpr int64_t kTasksPerCore = 8;

// The weights of one chunk of input blocks for one group of 64 output channels take at most half
// the core's L2 (as BlockedConv's ChunkWeightBytes: 512 KB where the OS does not say).
int64_t ChunkWeightBytes() {
  static const int64_t bytes = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    return l2 > 0 ? static_cast<int64_t>(l2) / 2 : int64_t{512} * 1024;
  }();
  return bytes;
}

int64_t PositiveMod(int64_t a, int64_t m) { return ((a % m) + m) % m; }

class BlockedConvTransposeKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(TransposeAttributes attrs, ParseTransposeAttributes(info));
    ONNXFLOW_ASSIGN_OR_RETURN(ActivationSpec activation, ParseFusedActivation(info));
    const Tensor* w = info.constant_input(1);
    if (w == nullptr || w->dtype() != DataType::kFloat || w->rank() != 4) {
      return InvalidArgument("BlockedConvTranspose: W must be a constant float [C, M, kh, kw]");
    }
    if (attrs.conv.group != 1 || w->dim(0) == 0 || w->dim(1) == 0 || w->dim(2) == 0 || w->dim(3) == 0) {
      return InvalidArgument("BlockedConvTranspose: needs group 1, channels and taps, got W " +
                             ShapeToString(w->shape()));
    }
    const std::vector<int64_t>& s = attrs.conv.strides;
    const std::vector<int64_t>& d = attrs.conv.dilations;
    if ((!s.empty() && (s.size() != 2 || s[0] < 1 || s[1] < 1 || s[0] > 64 || s[1] > 64)) ||
        (!d.empty() && (d.size() != 2 || d[0] < 1 || d[1] < 1))) {
      return InvalidArgument("BlockedConvTranspose: needs 2 strides of 1 to 64 and 2 positive dilations");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ConstantBias(info, "BlockedConvTranspose", w->dim(1)));
    return std::unique_ptr<OpKernel>(new BlockedConvTransposeKernel(std::move(attrs), activation, *w, b));
  }

  // W and B live packed in the kernel.
  bool ReadsAtRun(int input) const override { return input != 1 && input != 2; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat) return InvalidArgument("BlockedConvTranspose: input 'X' must be float");
    ONNXFLOW_ASSIGN_OR_RETURN(Shape x_nchw, UnblockedShapeOfBlocks(x->shape(), "X", blocks_, "BlockedConvTranspose",
                                                                   "W " + ShapeToString(w_shape_)));
    x_nchw[1] = channels_;
    ONNXFLOW_ASSIGN_OR_RETURN(TransposeGeometry g, ComputeTransposeGeometry(attrs_, x_nchw, w_shape_));
    const Shape y_shape = {g.batch, out_width_ / kChannelBlock, g.out_spatial[0], g.out_spatial[1], kChannelBlock};
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, y_shape));
    if (y->size() == 0) return Status::Ok();
    // An image smaller than the kernel (DCGAN's 1x1 latent through 4x4 taps): most taps of a
    // phase's tile fall outside it, so each output pixel takes its inside taps alone.
    if (g.in_spatial[0] * g.in_spatial[1] < g.kernel_size()) {
      RunSparse(ctx, g, x->data<float>(), y->mutable_data<float>());
    } else {
      Run(ctx, g, x->data<float>(), y->mutable_data<float>());
    }
    return Status::Ok();
  }

 private:
  // The taps of one residue (k * dilation mod stride) on one axis: their kernel indices.
  struct AxisTaps {
    std::vector<int64_t> k;
  };

  BlockedConvTransposeKernel(TransposeAttributes attrs, ActivationSpec activation, const Tensor& w, const Tensor* b)
      : attrs_(std::move(attrs)),
        activation_(activation),
        w_shape_(w.shape()),
        channels_(w.dim(0)),
        out_channels_(w.dim(1)),
        blocks_((channels_ + kChannelBlock - 1) / kChannelBlock),
        in_width_(blocks_ * kChannelBlock),
        out_width_((out_channels_ + kChannelBlock - 1) / kChannelBlock * kChannelBlock),
        bias_(static_cast<size_t>(out_width_), 0.0f) {
    if (b != nullptr) std::copy(b->data<float>(), b->data<float>() + out_channels_, bias_.begin());
    stride_[0] = attrs_.conv.strides.empty() ? 1 : attrs_.conv.strides[0];
    stride_[1] = attrs_.conv.strides.empty() ? 1 : attrs_.conv.strides[1];
    const int64_t dil[2] = {attrs_.conv.dilations.empty() ? 1 : attrs_.conv.dilations[0],
                            attrs_.conv.dilations.empty() ? 1 : attrs_.conv.dilations[1]};
    for (int a = 0; a < 2; ++a) {
      residues_[a].resize(static_cast<size_t>(stride_[a]));
      for (int64_t k = 0; k < w.dim(2 + a); ++k) {
        residues_[a][static_cast<size_t>(PositiveMod(k * dil[a], stride_[a]))].k.push_back(k);
      }
      dilation_[a] = dil[a];
    }
    // Per residue pair, its packed weights' offset; the most taps of any pair sets the chunks.
    int64_t offset = 0, most_taps = 1;
    for (int64_t rh = 0; rh < stride_[0]; ++rh) {
      for (int64_t rw = 0; rw < stride_[1]; ++rw) {
        residue_offset_.push_back(offset);
        const int64_t taps = Taps(rh, rw);
        most_taps = std::max(most_taps, taps);
        offset += out_width_ * in_width_ * taps;
      }
    }
    const int64_t block_bytes = most_taps * kChannelBlock * kGroupChannels * static_cast<int64_t>(sizeof(float));
    const int64_t most = std::max<int64_t>(1, ChunkWeightBytes() / block_bytes);
    const int64_t chunks = (blocks_ + most - 1) / most;
    chunk_blocks_ = (blocks_ + chunks - 1) / chunks;
    // The packing depends on W and on the strides and dilations that sort its taps into residues.
    WeightKey key("BlockedConvTranspose");
    key.Add(w).Add(stride_[0]).Add(stride_[1]).Add(dil[0]).Add(dil[1]);
    packed_ = SharedWeights::Get<PackedWeights>(key, [&] {
      PackedWeights packed(WeightType::kFloat, std::max<int64_t>(offset, 1));
      Pack(w.data<float>(), packed.mutable_data<float>());
      return packed;
    });
  }

  int64_t Taps(int64_t rh, int64_t rw) const {
    return static_cast<int64_t>(residues_[0][static_cast<size_t>(rh)].k.size() *
                                residues_[1][static_cast<size_t>(rw)].k.size());
  }

  // Per residue pair: [group][block][tap][channel][group width] (only the last group narrower).
  void Pack(const float* wd, float* packed) const {
    const int64_t kh_n = w_shape_[2], kw_n = w_shape_[3];
    size_t pair = 0;
    for (int64_t rh = 0; rh < stride_[0]; ++rh) {
      for (int64_t rw = 0; rw < stride_[1]; ++rw, ++pair) {
        float* dst = packed + residue_offset_[pair];
        const auto& rows = residues_[0][static_cast<size_t>(rh)].k;
        const auto& cols = residues_[1][static_cast<size_t>(rw)].k;
        for (int64_t c0 = 0; c0 < out_width_; c0 += kGroupChannels) {
          const int64_t width = std::min(kGroupChannels, out_width_ - c0);
          for (int64_t block = 0; block < blocks_; ++block) {
            for (int64_t kh : rows) {
              for (int64_t kw : cols) {
                for (int64_t ci = 0; ci < kChannelBlock; ++ci) {
                  const int64_t c = block * kChannelBlock + ci;
                  for (int64_t col = 0; col < width; ++col) {
                    const int64_t m = c0 + col;
                    const bool real = m < out_channels_ && c < channels_;
                    *dst++ = real ? wd[((c * out_channels_ + m) * kh_n + kh) * kw_n + kw] : 0.0f;
                  }
                }
              }
            }
          }
        }
      }
    }
  }

  // Per output pixel, per tap that reads inside the image, per input block: a one-pixel tile of
  // one tap and one block adding into the pixel (the first call starts it from the bias, the last
  // applies the activation). Each weight is read once per output pixel whose sum it is in: for a
  // 1x1 latent through 4x4 taps, once in all, where the phase tiles read every tap for every pixel
  // (16 times the weights and multiply-adds). A task per image and group of 64 channels.
  void RunSparse(const KernelContext& ctx, const TransposeGeometry& g, const float* xd, float* yd) const {
    const int64_t sh = stride_[0], sw = stride_[1];
    const int64_t ih_n = g.in_spatial[0], iw_n = g.in_spatial[1];
    const int64_t oh_n = g.out_spatial[0], ow_n = g.out_spatial[1];
    const int64_t groups = (out_width_ + kGroupChannels - 1) / kGroupChannels;
    const int64_t work = g.batch * oh_n * ow_n * out_width_ * in_width_ * g.kernel_size();
    ParallelTasks(ctx, g.batch * groups, work, [&](int64_t task) {
      const int64_t n = task / groups, group = task % groups;
      const int64_t c0 = group * kGroupChannels, width = std::min(kGroupChannels, out_width_ - c0);
      int64_t offset = 0;
      BlockedTile t;
      t.x_block_stride = ih_n * iw_n * kChannelBlock;
      t.blocks = 1;
      t.block_channels = kChannelBlock;
      t.offsets = &offset;
      t.ldw = width;
      t.width = width;
      t.y_block_stride = oh_n * ow_n * kChannelBlock;
      t.bias = bias_.data() + c0;
      t.activation = activation_;
      t.tile_pixels = 1;
      t.pixels = 1;
      const float* image = xd + n * in_width_ * ih_n * iw_n;
      float* y_group = yd + (n * out_width_ + c0) * oh_n * ow_n;
      for (int64_t oh = 0; oh < oh_n; ++oh) {
        const int64_t rh = PositiveMod(oh + g.pads_begin[0], sh);
        const auto& rows = residues_[0][static_cast<size_t>(rh)].k;
        for (int64_t ow = 0; ow < ow_n; ++ow) {
          const int64_t rw = PositiveMod(ow + g.pads_begin[1], sw);
          const auto& cols = residues_[1][static_cast<size_t>(rw)].k;
          const int64_t taps = static_cast<int64_t>(rows.size() * cols.size());
          const size_t pair = static_cast<size_t>(rh * sw + rw);
          const float* group_weights =
              static_cast<const float*>(packed_->at(residue_offset_[pair] + c0 * in_width_ * taps));
          t.y = y_group + (oh * ow_n + ow) * kChannelBlock;
          t.accumulate = false;
          t.last = false;
          for (size_t r = 0; r < rows.size(); ++r) {
            const int64_t ih = FloorDiv(oh + g.pads_begin[0] - rows[r] * dilation_[0], sh);
            if (ih < 0 || ih >= ih_n) continue;
            for (size_t c = 0; c < cols.size(); ++c) {
              const int64_t iw = FloorDiv(ow + g.pads_begin[1] - cols[c] * dilation_[1], sw);
              if (iw < 0 || iw >= iw_n) continue;
              offset = (ih * iw_n + iw) * kChannelBlock;
              const int64_t tap = static_cast<int64_t>(r * cols.size() + c);
              for (int64_t b = 0; b < blocks_; ++b) {
                t.x = image + b * t.x_block_stride;
                t.w = group_weights + (b * taps + tap) * kChannelBlock * width;
                t.taps = 1;
                RunBlockedTile(t);
                t.accumulate = true;
              }
            }
          }
          // The activation (and, with no tap inside, the bias alone): a call of no taps.
          t.taps = 0;
          t.last = true;
          RunBlockedTile(t);
        }
      }
    });
  }

  void Run(const KernelContext& ctx, const TransposeGeometry& g, const float* xd, float* yd) const {
    const int64_t sh = stride_[0], sw = stride_[1];
    const int64_t ih_n = g.in_spatial[0], iw_n = g.in_spatial[1];
    const int64_t oh_n = g.out_spatial[0], ow_n = g.out_spatial[1];
    const int64_t tile_pixels = BlockedTilePixels(std::min(kGroupChannels, out_width_));
    const int64_t phases = sh * sw, groups = (out_width_ + kGroupChannels - 1) / kGroupChannels;
    // Every phase's grid has at most these rows and columns.
    const int64_t grid_rows = (oh_n + sh - 1) / sh, grid_cols = (ow_n + sw - 1) / sw;
    const int64_t row_tiles = (grid_cols + tile_pixels - 1) / tile_pixels;
    int64_t rows_per_task = std::max<int64_t>(1, std::min(grid_rows, kMaxTilesPerTask / std::max<int64_t>(1, row_tiles)));
    while (rows_per_task > 1 &&
           g.batch * phases * groups * ((grid_rows + rows_per_task - 1) / rows_per_task) < kTasksPerCore * ctx.threads()) {
      rows_per_task = (rows_per_task + 1) / 2;
    }
    const int64_t ranges = (grid_rows + rows_per_task - 1) / rows_per_task;
    const int64_t tasks = g.batch * phases * groups * ranges;
    const int64_t work = g.batch * oh_n * ow_n * out_width_ * in_width_ * std::max<int64_t>(1, g.kernel_size() / phases);
    const int64_t x_block_stride = ih_n * iw_n * kChannelBlock, y_block_stride = oh_n * ow_n * kChannelBlock;

    auto run_task = [&](int64_t task) {
      const int64_t range = task % ranges, group = task / ranges % groups;
      const int64_t phase = task / (ranges * groups) % phases, n = task / (ranges * groups * phases);
      const int64_t ph = phase / sw, pw = phase % sw;
      if (ph >= oh_n || pw >= ow_n) return;
      const int64_t rows_here = (oh_n - ph + sh - 1) / sh, cols_here = (ow_n - pw + sw - 1) / sw;
      const int64_t i0 = range * rows_per_task, i1 = std::min(rows_here, i0 + rows_per_task);
      if (i0 >= i1) return;
      const int64_t rh = PositiveMod(ph + g.pads_begin[0], sh), rw = PositiveMod(pw + g.pads_begin[1], sw);
      const auto& rows = residues_[0][static_cast<size_t>(rh)].k;
      const auto& cols = residues_[1][static_cast<size_t>(rw)].k;
      const int64_t taps = static_cast<int64_t>(rows.size() * cols.size());
      // Input offsets of each tap row and column from the phase grid's (i, j).
      std::vector<int64_t> dih(rows.size()), diw(cols.size());
      for (size_t r = 0; r < rows.size(); ++r) dih[r] = FloorDiv(ph + g.pads_begin[0] - rows[r] * dilation_[0], sh);
      for (size_t c = 0; c < cols.size(); ++c) diw[c] = FloorDiv(pw + g.pads_begin[1] - cols[c] * dilation_[1], sw);
      int64_t diw_lo = 0, diw_hi = 0;
      if (!diw.empty()) {
        diw_lo = *std::min_element(diw.begin(), diw.end());
        diw_hi = *std::max_element(diw.begin(), diw.end());
      }
      const int64_t c0 = group * kGroupChannels, width = std::min(kGroupChannels, out_width_ - c0);
      const size_t pair = static_cast<size_t>(rh * sw + rw);
      const float* group_weights =
          static_cast<const float*>(packed_->at(residue_offset_[pair] + c0 * in_width_ * taps));
      std::vector<int64_t> offsets(static_cast<size_t>(std::max<int64_t>(1, taps * tile_pixels)));
      std::vector<int64_t> tap_offsets(static_cast<size_t>(std::max<int64_t>(1, taps)));
      BlockedTile t;
      t.x_block_stride = x_block_stride;
      t.block_channels = kChannelBlock;
      t.taps = taps;
      t.pixel_step = kChannelBlock;
      t.ldw = width;
      t.width = width;
      t.y_block_stride = y_block_stride;
      t.y_pixel_stride = sw * kChannelBlock;
      t.bias = bias_.data() + c0;
      t.activation = activation_;
      t.tile_pixels = tile_pixels;
      const float* image = xd + n * in_width_ * ih_n * iw_n;
      float* y_group = yd + (n * out_width_ + c0) * oh_n * ow_n;
      for (int64_t b0 = 0; b0 < blocks_; b0 += chunk_blocks_) {
        t.blocks = std::min(chunk_blocks_, blocks_ - b0);
        t.x = image + b0 * x_block_stride;
        t.w = group_weights + b0 * taps * kChannelBlock * width;
        t.accumulate = b0 > 0;
        t.last = b0 + t.blocks == blocks_;
        for (int64_t i = i0; i < i1; ++i) {
          bool rows_inside = true;
          for (size_t r = 0; r < rows.size(); ++r) {
            const int64_t ih = i + dih[r];
            rows_inside = rows_inside && ih >= 0 && ih < ih_n;
            for (size_t c = 0; c < cols.size(); ++c) {
              tap_offsets[r * cols.size() + c] = (ih * iw_n + diw[c]) * kChannelBlock;
            }
          }
          const int64_t oh = ph + sh * i;
          for (int64_t j0 = 0; j0 < cols_here; j0 += tile_pixels) {
            t.pixels = std::min(tile_pixels, cols_here - j0);
            if (rows_inside && t.pixels == tile_pixels && j0 + diw_lo >= 0 && j0 + tile_pixels - 1 + diw_hi < iw_n) {
              t.offsets = nullptr;
              t.tap_offsets = tap_offsets.data();
              t.base = j0 * kChannelBlock;
            } else {
              for (size_t r = 0; r < rows.size(); ++r) {
                const int64_t ih = i + dih[r];
                for (size_t c = 0; c < cols.size(); ++c) {
                  int64_t* off = offsets.data() + (r * cols.size() + c) * tile_pixels;
                  for (int64_t p = 0; p < tile_pixels; ++p) {
                    const int64_t iw = j0 + p + diw[c];
                    const bool inside = p < t.pixels && ih >= 0 && ih < ih_n && iw >= 0 && iw < iw_n;
                    off[p] = inside ? (ih * iw_n + iw) * kChannelBlock : -1;
                  }
                }
              }
              t.offsets = offsets.data();
            }
            t.y = y_group + (oh * ow_n + pw + sw * j0) * kChannelBlock;
            RunBlockedTile(t);
          }
        }
      }
    };
    ParallelTasks(ctx, tasks, work, run_task);
  }

  TransposeAttributes attrs_;
  ActivationSpec activation_;
  Shape w_shape_;
  int64_t channels_, out_channels_, blocks_, in_width_, out_width_;
  int64_t stride_[2] = {1, 1}, dilation_[2] = {1, 1};
  std::vector<AxisTaps> residues_[2];   // per axis, per residue of k * dilation mod stride: its taps
  std::vector<int64_t> residue_offset_;  // per residue pair (rh * s_w + rw): where its weights start
  int64_t chunk_blocks_ = 1;
  std::vector<float> bias_;
  std::shared_ptr<const PackedWeights> packed_;  // shared by content across kernels and sessions
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBlockedConvTranspose(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kBlockedConvTranspose, internal_ops::kVersion, kOpenEnded,
                           BlockedConvTransposeKernel::Create);
}

}  // namespace onnxflow
