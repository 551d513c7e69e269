// SIMD part of the blocked reorders (reorder.cc): channel planes <-> pixel-major rows of channels,
// 16 pixels at a time. On AVX-512 a whole 16 x 16 tile (a full block of 16 channels and 16
// pixels) is transposed in registers; partial tiles, other channel counts (a stem's 3 channels)
// and the other targets move element by element within the tile, which stays in L1 either way.
// FromBlocked also reads float16 blocks, widening each tile to float before it is moved.
// Compiled once per CPU target through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "hwy/highway.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/load_weights-inl.h"
#include "ops/framework/transpose16x16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// A stem's image, 3 (or 4) planes -> pixels of 3 (4) floats: a vector of pixels from each plane,
// stored interleaved; the pixels past the last whole vector, one by one.
void InterleaveFewChannels(const float* HWY_RESTRICT planes, int64_t plane_stride, int64_t channels, int64_t pixels,
                           float* HWY_RESTRICT interleaved) {
  const hn::ScalableTag<float> d;
  const int64_t n = static_cast<int64_t>(hn::Lanes(d));
  int64_t p = 0;
  for (; p + n <= pixels; p += n) {
    const auto v0 = hn::LoadU(d, planes + p);
    const auto v1 = hn::LoadU(d, planes + plane_stride + p);
    const auto v2 = hn::LoadU(d, planes + 2 * plane_stride + p);
    if (channels == 3) {
      hn::StoreInterleaved3(v0, v1, v2, d, interleaved + p * 3);
    } else {
      const auto v3 = hn::LoadU(d, planes + 3 * plane_stride + p);
      hn::StoreInterleaved4(v0, v1, v2, v3, d, interleaved + p * 4);
    }
  }
  for (; p < pixels; ++p) {
    for (int64_t c = 0; c < channels; ++c) interleaved[p * channels + c] = planes[c * plane_stride + p];
  }
}

// Planes of `channels` x `pixels` floats, `plane_stride` apart -> rows of `lanes` floats per
// pixel (zero past `channels`). Stems' 3 or 4 channels with no pad lanes: InterleaveFewChannels
// (a 240 x 320 RGB image 16% of its stem convolution's time element by element).
void InterleaveChannelsImpl(const float* HWY_RESTRICT planes, int64_t plane_stride, int64_t channels, int64_t pixels,
                            int64_t lanes, float* HWY_RESTRICT interleaved) {
  if (lanes == channels && (channels == 3 || channels == 4)) {
    InterleaveFewChannels(planes, plane_stride, channels, pixels, interleaved);
    return;
  }
  for (int64_t p0 = 0; p0 < pixels; p0 += kChannelBlock) {
    const int64_t count = std::min(kChannelBlock, pixels - p0);
    if (kTransposesTiles && count == kChannelBlock && channels == kChannelBlock && lanes == kChannelBlock) {
      Transpose16x16(planes + p0, plane_stride, interleaved + p0 * lanes, lanes);
      continue;
    }
    for (int64_t c = 0; c < lanes; ++c) {
      float* dst = interleaved + p0 * lanes + c;
      if (c >= channels) {
        for (int64_t i = 0; i < count; ++i) dst[i * lanes] = 0.0f;
        continue;
      }
      const float* src = planes + c * plane_stride + p0;
      for (int64_t i = 0; i < count; ++i) dst[i * lanes] = src[i];
    }
  }
}

// One tile of `count` (<= 16) pixels of a block, 16 floats each -> the first `channels` of them
// as planes `plane_stride` apart.
void DeinterleaveTile(const float* HWY_RESTRICT tile_in, int64_t count, int64_t plane_stride, int64_t channels,
                      float* HWY_RESTRICT planes) {
  if (kTransposesTiles && count == kChannelBlock && channels == kChannelBlock) {
    Transpose16x16(tile_in, kChannelBlock, planes, plane_stride);
    return;
  }
  if (kTransposesTiles && count == kChannelBlock) {
    // A last block's few channels (a segmentation head's 21 classes: 16 + 5): the whole tile
    // through the registers, then its real rows (element by element, 5 channels of a 224x224
    // map took a third of the 1.4 ms reorder).
    alignas(64) float tile[kChannelBlock * kChannelBlock];
    Transpose16x16(tile_in, kChannelBlock, tile, kChannelBlock);
    for (int64_t c = 0; c < channels; ++c) {
      std::copy_n(tile + c * kChannelBlock, kChannelBlock, planes + c * plane_stride);
    }
    return;
  }
  for (int64_t c = 0; c < channels; ++c) {
    const float* src = tile_in + c;
    float* dst = planes + c * plane_stride;
    for (int64_t i = 0; i < count; ++i) dst[i] = src[i * kChannelBlock];
  }
}

// Rows of 16 values per pixel (a block) -> the first `channels` of them as float planes
// `plane_stride` apart. T: float, or float16 (a float16 model's activations), which each tile
// widens into floats first (exactly) and then moves as the float path does.
template <typename T>
void DeinterleaveBlocks(const T* HWY_RESTRICT blocked, int64_t pixels, int64_t plane_stride, int64_t channels,
                        float* HWY_RESTRICT planes) {
  for (int64_t p0 = 0; p0 < pixels; p0 += kChannelBlock) {
    const int64_t count = std::min(kChannelBlock, pixels - p0);
    const T* in = blocked + p0 * kChannelBlock;
    if constexpr (std::is_same_v<T, float>) {
      DeinterleaveTile(in, count, plane_stride, channels, planes + p0);
    } else {
      const hn::CappedTag<float, kChannelBlock> d;
      alignas(64) float wide[kChannelBlock * kChannelBlock];
      for (size_t i = 0; i < static_cast<size_t>(count * kChannelBlock); i += hn::Lanes(d)) {
        hn::Store(LoadWeights(d, in + i), d, wide + i);
      }
      DeinterleaveTile(wide, count, plane_stride, channels, planes + p0);
    }
  }
}

// HWY_EXPORT takes one function per name, not a template.
void DeinterleaveImpl(const float* blocked, int64_t pixels, int64_t plane_stride, int64_t channels, float* planes) {
  DeinterleaveBlocks(blocked, pixels, plane_stride, channels, planes);
}
void DeinterleaveHalfImpl(const hwy::float16_t* blocked, int64_t pixels, int64_t plane_stride, int64_t channels,
                          float* planes) {
  DeinterleaveBlocks(blocked, pixels, plane_stride, channels, planes);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_REORDER_INL_H_
