// One call of the blocked convolution's SIMD tile (blocked_conv-inl.h), as the driver in
// blocked_conv.cc describes it.
#pragma once

#include <cstdint>
#include <optional>

#include "include/onnxflow/tensor.h"

#include "ops/blocked/blocked_layout.h"
#include "ops/math/gemm.h"  // ActivationSpec, AlignedFloats

namespace onnxflow {

// Output pixels per tile: 6 x 4 vectors of accumulators fill AVX-512's registers. A convolution
// of 17 to 32 output channels (2 vectors) takes 12 pixels per tile there (BlockedTilePixels):
// 24 accumulators again, and half the tiles' fixed costs per multiply-add.
inline constexpr int64_t kTilePixels = 6;
// Output channels per packed weight group and per task of the convolutions that call the tile
// (BlockedConv, Winograd): the 4 AVX-512 vectors one tile accumulates.
inline constexpr int64_t kGroupChannels = 64;

// How packed convolution weights are stored. A float16 (or bfloat16) model's weights stay 16-bit
// in memory, half the bytes of float; the convolutions widen them to float as they run (the
// direct path a chunk at a time, blocked_conv.cc; Winograd's transform, winograd.cc), so the
// tiles compute what they compute for a float model on the widened weights, bit for bit.
enum class WeightType : uint8_t { kFloat, kFloat16, kBFloat16 };

inline int64_t WeightBytes(WeightType t) { return t == WeightType::kFloat ? 4 : 2; }

// The WeightType of a tensor of `t`, or nothing for the types no tile reads.
inline std::optional<WeightType> WeightTypeOf(DataType t) {
  switch (t) {
    case DataType::kFloat:
      return WeightType::kFloat;
    case DataType::kFloat16:
      return WeightType::kFloat16;
    case DataType::kBFloat16:
      return WeightType::kBFloat16;
    default:
      return std::nullopt;
  }
}

// Packed weights of one of those types, 64-byte aligned: a row of 64 float weights is four whole
// cache lines, of 64 half ones two.
class PackedWeights {
 public:
  PackedWeights() = default;
  PackedWeights(WeightType type, int64_t size)
      : type_(type), size_(size), storage_(AlignedFloats::Make((size * WeightBytes(type) + 3) / 4, /*zero=*/false)) {}

  WeightType type() const { return type_; }
  int64_t size() const { return size_; }  // in weights
  // Weight `i` on.
  const void* at(int64_t i) const { return reinterpret_cast<const char*>(storage_.get()) + i * WeightBytes(type_); }
  template <class T>
  T* mutable_data() const {
    return reinterpret_cast<T*>(storage_.get());
  }

 private:
  WeightType type_ = WeightType::kFloat;
  int64_t size_ = 0;
  AlignedFloats storage_;
};

struct BlockedTile {
  // Input: the chunk's first channel block of one image. A pixel's channels of a block are
  // contiguous; block b starts at x + b * x_block_stride.
  const float* x = nullptr;
  int64_t x_block_stride = 0;
  int64_t blocks = 0;          // input channel blocks in this chunk
  int64_t block_channels = 0;  // channels per block (16, or a stem's few) and tap
  // When > 0 (block_channels 16 only): the chunk's last block holds only this many real channels,
  // its pad lanes' weights are zeros, and the tile reads only these. A 24-channel layer is then 24
  // multiply-adds per output, not 32.
  int64_t tail_channels = 0;
  // Where each pixel reads its input for each of `taps` taps, relative to a block's start, in one
  // of two ways:
  //  - `offsets` [taps][tile_pixels], -1 where the tap falls in the padding (any tile);
  //  - offsets null: pixel p's tap at base + tap_offsets[tap] + p * pixel_step (a tile of whole
  //    pixels on one output row with every tap inside the image). Then a tap is a whole kernel
  //    row, block_channels = kernel width x channels: those are contiguous in the image.
  int64_t taps = 0;
  const int64_t* offsets = nullptr;
  // With offsets: the taps to read, when some read only padding for every pixel of the tile
  // (skipped, their weights too); null: all `taps`. A dilated convolution on a small map (an
  // ASPP head's dilation 12-36 on 14x14) has most taps in the padding for whole tiles.
  const int64_t* live_taps = nullptr;
  int64_t live_count = 0;
  const int64_t* tap_offsets = nullptr;
  int64_t base = 0, pixel_step = 0;
  // Weights of the chunk: [block][tap][channel][ldw], ldw = the tile's output channels.
  const float* w = nullptr;
  int64_t ldw = 0;
  int64_t width = 0;  // output channels, a multiple of 16
  // The real channels among them when the last block has pad lanes, else 0 (all real). A target
  // whose vectors are narrower than a block (AVX2's 8 lanes) skips vectors of pad lanes only; the
  // driver writes zeros there (a 144 -> 24 projection then computes 24 channels, not 32).
  int64_t real_width = 0;
  // Output: the tile's first pixel in its first output block (blocked layout, blocks
  // y_block_stride apart). A residual has the same layout; it starts the sums with the bias (the
  // first chunk), so it may be y itself: a convolution can write over the residual it adds.
  float* y = nullptr;
  int64_t y_block_stride = 0;
  // Floats between the tile's output pixels (and the residual's): 16 for a run of a row; a
  // transposed convolution's output phase (blocked_conv_transpose.cc) writes every stride-th pixel.
  int64_t y_pixel_stride = kChannelBlock;
  int64_t tile_pixels = kTilePixels;  // BlockedTilePixels(width)
  int64_t pixels = 0;                 // valid pixels, at most tile_pixels
  // A pointwise tile (1x1, stride 1, no pads: X's pixels are Y's) may be a run of this many whole
  // tiles in a row, tile i at i * tile_pixels pixels on in X, Y and the residual alike: a tile's
  // fixed costs (the call and its setup, the prefetch schedule) are paid once per run.
  int64_t tiles = 1;
  const float* bias = nullptr;   // the tile's `width` biases, or null; read when !accumulate
  // Read when !accumulate, too; may alias y.
  const float* residual = nullptr;
  // Weights to request into the cache while this tile runs (the next chunk's share of this
  // tile), or null: in a network a convolution's weights arrive cold from memory, and the
  // hardware prefetcher stops at every 4 KB page.
  const void* prefetch = nullptr;
  int64_t prefetch_bytes = 0;
  // A float16 output (a float16 model's stored activations), or null: the last chunk stores its
  // sums here, narrowed, instead of into y (where the earlier chunks of a deep layer keep their
  // float sums). residual_half, the float16 residual read instead of `residual`. Both have the
  // layout of y with blocks y_half_block_stride apart. (Summed into float scratch and narrowed
  // by a pass after the tiles, a float16 pointwise layer of 16 input channels ran 1.35x its float
  // twin: the scratch's trip through L2 cost as much as the products.)
  uint16_t* y_half = nullptr;
  const uint16_t* residual_half = nullptr;
  int64_t y_half_block_stride = 0;
  bool accumulate = false;  // add to y (a later chunk of input channels)
  bool last = false;        // the last chunk: apply the activation (and store into y_half)
  ActivationSpec activation;
};

// Widens `n` packed weights of `type` into `out` (exact).
void WidenWeights(const void* weights, WeightType type, int64_t n, float* out);

// Runs one tile on the best SIMD target of this CPU.
void RunBlockedTile(const BlockedTile& tile);

// The pixels per tile for tiles of `width` output channels on this CPU: kTilePixels, or 12 for
// AVX-512 tiles of 2 vectors.
int64_t BlockedTilePixels(int64_t width);

}  // namespace onnxflow
