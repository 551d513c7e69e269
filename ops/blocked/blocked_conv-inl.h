// SIMD part of the channel-blocked convolution (blocked_conv.cc): one tile of kTilePixels (or 12) output
// pixels by up to 64 output channels, accumulated over a chunk of input channel blocks. Compiled
// once per CPU target through hwy/foreach_target.h; the driver never touches vectors.
//
// Output channels are in the lanes, so a tile's weights are a few vector loads per input channel
// and the image supplies one broadcast per (pixel, input channel): on AVX-512, 6 pixels x 4
// vectors = 24 accumulators, 4 weight vectors and a broadcast in the 32 registers, 24 FMAs per 4
// loads and 6 broadcasts. Each pixel reads its input through its own offset per tap, so padding
// (a zero block), strides, dilations and tiles that wrap from one output row to the next are all
// the same loop.

#if defined(ONNXFLOW_OPS_BLOCKED_BLOCKED_CONV_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_BLOCKED_CONV_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_BLOCKED_CONV_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_BLOCKED_CONV_INL_H_
#endif

#include <algorithm>
#include <array>
#include <cstdint>
#include <utility>

#include "hwy/highway.h"
#include "ops/blocked/blocked_conv_tile.h"
#include "ops/blocked/load_weights-inl.h"
#include "ops/math/activate-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Vectors of output channels per tile: AVX-512's 32 registers hold 6 x 4 accumulators; the
// 16-register targets keep 6 x 2.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL || HWY_TARGET == HWY_SCALAR
constexpr size_t kMaxVecs = 4;
#else
constexpr size_t kMaxVecs = 2;
#endif

using BlockD = hn::CappedTag<float, kChannelBlock>;

// Pixels per tile of 2 vectors on AVX-512 (blocked_conv_tile.h): as many accumulators as a
// full-width tile. (A tile of one vector keeps 6: with 12 it would wait on its 12 broadcasts per
// weight load, a 16-channel pointwise layer 0.068 -> 0.077 ms.)
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr int64_t kNarrowTilePixels = 2 * kTilePixels;
#else
constexpr int64_t kNarrowTilePixels = kTilePixels;
#endif

// Output channels per group of packed weights (and per task) on this target: the channels one tile
// accumulates in a pass, at least a block.
int64_t GroupChannelsImpl() {
  return std::max<int64_t>(kChannelBlock, static_cast<int64_t>(kMaxVecs * hn::Lanes(BlockD())));
}

int64_t TilePixelsImpl(int64_t width) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(BlockD()));
  return width > lanes && width <= static_cast<int64_t>(kMaxVecs / 2) * lanes ? kNarrowTilePixels : kTilePixels;
}

// kChannels > 0: t.block_channels, known when compiling (a pointwise tile's 16): the channel loop
// then has a fixed count (7% of a pointwise layer, whether of 16 or 1024 input channels). A tile of
// uniform taps may be a run of t.tiles tiles in a row (BlockedTile::tiles).
// kP: the tile's pixels (t.tile_pixels).
template <size_t kVecs, bool kUniform, int64_t kChannels, size_t kP>
HWY_NOINLINE void ConvTile(const BlockedTile& t, int64_t channel0) {
  const BlockD d;
  using V = hn::Vec<BlockD>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  alignas(64) static const float kZeros[kChannelBlock] = {};

  // Where vector v of each pixel lives in the blocked output (a vector never straddles blocks:
  // the lane count divides 16).
  int64_t out_at[kVecs];
  HWY_UNROLL(4)
  for (size_t v = 0; v < kVecs; ++v) {
    const int64_t c = channel0 + static_cast<int64_t>(v) * lanes;
    out_at[v] = (c / kChannelBlock) * t.y_block_stride + c % kChannelBlock;
  }
  // The same for a float16 output and residual (their own block stride).
  int64_t half_at[kVecs];
  HWY_UNROLL(4)
  for (size_t v = 0; v < kVecs; ++v) {
    const int64_t c = channel0 + static_cast<int64_t>(v) * lanes;
    half_at[v] = (c / kChannelBlock) * t.y_half_block_stride + c % kChannelBlock;
  }
  const float* HWY_RESTRICT w = t.w + channel0;
  const int64_t y_pixel_stride = t.y_pixel_stride;
  const int64_t tiles = kUniform ? t.tiles : 1;

  const int64_t block_channels = kChannels > 0 ? kChannels : t.block_channels;
  const int64_t tap_weights = block_channels * t.ldw;
  // The prefetches go to L2 (the line fill buffers that an L1 prefetch holds are what the tile's
  // own misses need), spread evenly over the inner iterations of all the tiles: `per_burst` lines
  // every `every`.
  constexpr int64_t kLine = 64;
  const char* prefetch = static_cast<const char*>(t.prefetch);
  const char* prefetch_end = prefetch + t.prefetch_bytes;
  const bool some_taps = !kUniform && t.live_taps != nullptr;
  const int64_t taps = some_taps ? t.live_count : t.taps;
  const int64_t iterations = std::max<int64_t>(1, tiles * t.blocks * taps * block_channels);
  const int64_t lines = std::max<int64_t>(1, t.prefetch_bytes / kLine);
  const int64_t every = std::max<int64_t>(1, iterations / lines);
  const int64_t per_burst = (lines + iterations - 1) / iterations;
  int64_t countdown = every;

  for (int64_t tile = 0; tile < tiles; ++tile) {
    // This tile's outputs (and residual) and its first pixel's input, the run's tile-th.
    const int64_t y_shift = tile * static_cast<int64_t>(kP) * y_pixel_stride;
    float* const y = t.y != nullptr ? t.y + y_shift : nullptr;
    const float* const residual = t.residual != nullptr ? t.residual + y_shift : nullptr;
    const int64_t x_shift = tile * static_cast<int64_t>(kP) * t.pixel_step;

    // The sums start from the output (a later chunk), or from the bias plus the residual. The
    // branches stay outside the 24 accumulators: inside, they cost a short tile (a stem's 27
    // channels x taps) a fifth of its time.
    V acc[kP][kVecs];
    if (t.accumulate) {
      HWY_UNROLL(12)
      for (size_t p = 0; p < kP; ++p) {
        const bool real = static_cast<int64_t>(p) < t.pixels;
        HWY_UNROLL(4)
        for (size_t v = 0; v < kVecs; ++v) {
          acc[p][v] = real ? hn::LoadU(d, y + out_at[v] + static_cast<int64_t>(p) * y_pixel_stride) : hn::Zero(d);
        }
      }
    } else {
      V start[kVecs];
      HWY_UNROLL(4)
      for (size_t v = 0; v < kVecs; ++v) {
        start[v] = t.bias != nullptr ? hn::LoadU(d, t.bias + channel0 + v * lanes) : hn::Zero(d);
      }
      HWY_UNROLL(12)
      for (size_t p = 0; p < kP; ++p) {
        HWY_UNROLL(4)
        for (size_t v = 0; v < kVecs; ++v) acc[p][v] = start[v];
      }
      if (residual != nullptr) {
        HWY_UNROLL(12)
        for (size_t p = 0; p < kP; ++p) {
          if (static_cast<int64_t>(p) >= t.pixels) break;
          HWY_UNROLL(4)
          for (size_t v = 0; v < kVecs; ++v) {
            acc[p][v] = hn::Add(acc[p][v], hn::LoadU(d, residual + out_at[v] + static_cast<int64_t>(p) * y_pixel_stride));
          }
        }
      } else if (t.residual_half != nullptr) {
        const auto* residual_half = reinterpret_cast<const hwy::float16_t*>(t.residual_half) + y_shift;
        HWY_UNROLL(12)
        for (size_t p = 0; p < kP; ++p) {
          if (static_cast<int64_t>(p) >= t.pixels) break;
          HWY_UNROLL(4)
          for (size_t v = 0; v < kVecs; ++v) {
            acc[p][v] = hn::Add(acc[p][v],
                                LoadWeights(d, residual_half + half_at[v] + static_cast<int64_t>(p) * y_pixel_stride));
          }
        }
      }
    }

    for (int64_t b = 0; b < t.blocks; ++b) {
      const float* HWY_RESTRICT xb = t.x + b * t.x_block_stride;
      const float* HWY_RESTRICT wb = w + b * t.taps * tap_weights;
      for (int64_t i = 0; i < taps; ++i) {
        const int64_t tap = some_taps ? t.live_taps[i] : i;
        const float* src[kP];
        if (kUniform) {
          const float* first = xb + t.base + x_shift + t.tap_offsets[tap];
          HWY_UNROLL(12)
          for (size_t p = 0; p < kP; ++p) src[p] = first + static_cast<int64_t>(p) * t.pixel_step;
        } else {
          // Without branches: border tiles mix inside and padding taps in no predictable order.
          const int64_t* off = t.offsets + tap * t.tile_pixels;  // kP of them read (one-pixel tiles: 1)
          HWY_UNROLL(12)
          for (size_t p = 0; p < kP; ++p) {
            const uintptr_t padding = static_cast<uintptr_t>(off[p] >> 63);  // all ones for -1
            const uintptr_t inside = reinterpret_cast<uintptr_t>(xb + (off[p] & ~off[p] >> 63));
            const uintptr_t zeros = reinterpret_cast<uintptr_t>(kZeros);
            src[p] = reinterpret_cast<const float*>((inside & ~padding) | (zeros & padding));
          }
        }
        const float* HWY_RESTRICT wt = wb + tap * tap_weights;
        const auto channel = [&](int64_t c) HWY_ATTR {
          if (--countdown == 0) {
            countdown = every;
            for (int64_t l = 0; l < per_burst && prefetch < prefetch_end; ++l, prefetch += kLine) {
              __builtin_prefetch(prefetch, /*rw=*/0, /*locality=L2*/ 2);
            }
          }
          V wv[kVecs];
          HWY_UNROLL(4)
          for (size_t v = 0; v < kVecs; ++v) wv[v] = hn::LoadU(d, wt + c * t.ldw + v * lanes);
          HWY_UNROLL(12)
          for (size_t p = 0; p < kP; ++p) {
            const V xv = hn::Set(d, src[p][c]);
            HWY_UNROLL(4)
            for (size_t v = 0; v < kVecs; ++v) acc[p][v] = hn::MulAdd(xv, wv[v], acc[p][v]);
          }
        };
        // Four at a time: unrolled all 16 times, the pointwise tile runs out of registers and
        // spills its accumulators (a 16-channel layer 25% slower); not at all, 3x3 layers lose 2%.
        if (b + 1 < t.blocks || t.tail_channels == 0) {
          HWY_UNROLL(4)
          for (int64_t c = 0; c < block_channels; ++c) channel(c);
        } else {
          HWY_UNROLL(4)
          for (int64_t c = 0; c < t.tail_channels; ++c) channel(c);
        }
      }
    }

    // The activation's switch, too, is taken once: Relu, the common one, inline.
    if (t.last && t.activation.kind == Activation::kRelu) {
      HWY_UNROLL(12)
      for (size_t p = 0; p < kP; ++p) {
        HWY_UNROLL(4)
        for (size_t v = 0; v < kVecs; ++v) acc[p][v] = MaxKeepNaN(d, hn::Zero(d), acc[p][v]);
      }
    } else if (t.last && t.activation.kind != Activation::kNone) {
      HWY_UNROLL(12)
      for (size_t p = 0; p < kP; ++p) {
        HWY_UNROLL(4)
        for (size_t v = 0; v < kVecs; ++v) acc[p][v] = Activate(d, t.activation, acc[p][v]);
      }
    }
    if (t.last && t.y_half != nullptr) {
      auto* y_half = reinterpret_cast<hwy::float16_t*>(t.y_half) + y_shift;
      HWY_UNROLL(12)
      for (size_t p = 0; p < kP; ++p) {
        if (static_cast<int64_t>(p) >= t.pixels) break;
        HWY_UNROLL(4)
        for (size_t v = 0; v < kVecs; ++v) {
          StoreHalf(d, acc[p][v], y_half + half_at[v] + static_cast<int64_t>(p) * y_pixel_stride);
        }
      }
      continue;
    }
    HWY_UNROLL(12)
    for (size_t p = 0; p < kP; ++p) {
      if (static_cast<int64_t>(p) >= t.pixels) break;
      HWY_UNROLL(4)
      for (size_t v = 0; v < kVecs; ++v) {
        hn::StoreU(acc[p][v], d, y + out_at[v] + static_cast<int64_t>(p) * y_pixel_stride);
      }
    }
  }
}

using ConvTileFn = void (*)(const BlockedTile&, int64_t);
template <bool kUniform, int64_t kChannels, size_t kP, size_t... kVecs>
constexpr std::array<ConvTileFn, sizeof...(kVecs)> ConvTileTable(std::index_sequence<kVecs...>) {
  return {&ConvTile<kVecs + 1, kUniform, kChannels, kP>...};
}

// Tiles of kP pixels and up to kVecCount vectors: gathered offsets, uniform, pointwise.
template <size_t kP, size_t kVecCount>
struct ConvTileTables {
  static constexpr auto kGathered = ConvTileTable<false, 0, kP>(std::make_index_sequence<kVecCount>());
  static constexpr auto kUniform = ConvTileTable<true, 0, kP>(std::make_index_sequence<kVecCount>());
  static constexpr auto kPointwise = ConvTileTable<true, kChannelBlock, kP>(std::make_index_sequence<kVecCount>());

  static void Run(const BlockedTile& t) {
    const auto& table = t.offsets != nullptr ? kGathered : t.block_channels == kChannelBlock ? kPointwise : kUniform;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(BlockD()));
    const int64_t width = t.real_width > 0 ? std::min(t.width, (t.real_width + lanes - 1) / lanes * lanes) : t.width;
    for (int64_t c = 0; c < width;) {
      const int64_t vecs = std::min<int64_t>(kVecCount, (width - c) / lanes);
      table[vecs - 1](t, c);
      c += vecs * lanes;
    }
  }
};

// All of a tile's output channels (`t.width`, a multiple of 16), kMaxVecs vectors at a time, or a
// narrow tile's (TilePixelsImpl) in one go. A tile of one pixel (squeeze-and-excitation's
// convolutions on a 1x1 map, the last tile of a row) takes a tile of 1: the full one would
// multiply 5 pixels it then drops, each weight load paying 6 times the multiply-adds it needs.
void RunBlockedTileImpl(const BlockedTile& t) {
  if (t.pixels == 1) return ConvTileTables<1, kMaxVecs>::Run(t);
  if constexpr (kNarrowTilePixels != kTilePixels) {
    if (t.tile_pixels == kNarrowTilePixels) return ConvTileTables<kNarrowTilePixels, kMaxVecs / 2>::Run(t);
  }
  ConvTileTables<kTilePixels, kMaxVecs>::Run(t);
}

// Rows of `blocks` channel blocks of X (float, or float16 widened), `count` values of each, times
// their channels' factors (16 a block, `factors` on): out holds block b at b * count.
template <typename T>
void ScaleBlocks(const T* x, int64_t x_block_stride, int64_t blocks, int64_t count, const float* factors, float* out) {
  const BlockD d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t b = 0; b < blocks; ++b) {
    const T* src = x + b * x_block_stride;
    float* dst = out + b * count;
    for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
      const auto f = hn::LoadU(d, factors + b * kChannelBlock + lane0);
      for (int64_t i = lane0; i < count; i += kChannelBlock) {
        hn::StoreU(hn::Mul(LoadWeights(d, src + i), f), d, dst + i);
      }
    }
  }
}

void ScaleBlocksImpl(const void* x, bool half, int64_t x_block_stride, int64_t blocks, int64_t count,
                     const float* factors, float* out) {
  if (half) {
    ScaleBlocks(static_cast<const hwy::float16_t*>(x), x_block_stride, blocks, count, factors, out);
  } else {
    ScaleBlocks(static_cast<const float*>(x), x_block_stride, blocks, count, factors, out);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_BLOCKED_CONV_INL_H_
