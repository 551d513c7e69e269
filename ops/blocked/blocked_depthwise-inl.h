// SIMD part of the blocked depthwise convolution (blocked_depthwise.cc). With the channels in the
// lanes a depthwise tap is one vector multiply-add: the input pixel's 16 channels times the tap's
// 16 weights, no shuffles and no per-channel loops. X and Y are float or float16 (TX, TY): a
// float16 X is widened in registers as each vector is loaded and a float16 Y narrowed as it is
// stored (load_weights-inl.h), so the sums are the float path's. Compiled once per CPU target
// through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_
#endif

#include <algorithm>
#include <cstdint>

#include "hwy/highway.h"
#include "ops/blocked/blocked_depthwise_row.h"
#include "ops/blocked/load_weights-inl.h"
#include "ops/math/activate-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

using DepthwiseD = hn::CappedTag<float, kChannelBlock>;

// Output pixels computed side by side in the interior: independent sums hide the multiply-add
// latency that one pixel's chain of taps would wait on.
constexpr int64_t kDepthwisePixels = 4;

// Output columns [ow0, ow1) of the row, `lane0` onward, with every tap's column inside the image
// when kInterior (the rows outside were already dropped: [i0, i1) are the kernel rows inside).
template <bool kInterior, typename TX, typename TY>
HWY_INLINE void DepthwiseColumns(const BlockedDepthwiseRow<TX, TY>& r, int64_t lane0, int64_t i0, int64_t i1,
                                 int64_t ow0, int64_t ow1) {
  const DepthwiseD d;
  using V = hn::Vec<DepthwiseD>;
  const V bias = hn::LoadU(d, r.bias + lane0);
  const int64_t row_values = r.in_w * kChannelBlock;
  // Kernel row i reads input row row0 + i * dilation_h; only rows [i0, i1) are inside the image,
  // and no pointer is formed to the others.
  const TX* plane = r.plane + lane0;
  int64_t ow = ow0;
  if (kInterior) {
    for (; ow + kDepthwisePixels <= ow1; ow += kDepthwisePixels) {
      V acc[kDepthwisePixels];
      for (auto& a : acc) a = bias;
      for (int64_t i = i0; i < i1; ++i) {
        const TX* row = plane + (r.row0 + i * r.dilation_h) * row_values;
        for (int64_t j = 0; j < r.kw; ++j) {
          const V w = hn::LoadU(d, r.weights + (i * r.kw + j) * kChannelBlock + lane0);
          const int64_t col = (ow * r.stride_w - r.left + j * r.dilation_w) * kChannelBlock;
          HWY_UNROLL(4)
          for (int64_t q = 0; q < kDepthwisePixels; ++q) {
            acc[q] = hn::MulAdd(LoadWeights(d, row + col + q * r.stride_w * kChannelBlock), w, acc[q]);
          }
        }
      }
      for (int64_t q = 0; q < kDepthwisePixels; ++q) {
        StoreAs(d, Activate(d, r.activation, acc[q]), r.out + (ow + q) * kChannelBlock + lane0);
      }
    }
  }
  for (; ow < ow1; ++ow) {
    V acc = bias;
    for (int64_t i = i0; i < i1; ++i) {
      const TX* row = plane + (r.row0 + i * r.dilation_h) * row_values;
      for (int64_t j = 0; j < r.kw; ++j) {
        const int64_t iw = ow * r.stride_w - r.left + j * r.dilation_w;
        if (!kInterior && (iw < 0 || iw >= r.in_w)) continue;
        const V w = hn::LoadU(d, r.weights + (i * r.kw + j) * kChannelBlock + lane0);
        acc = hn::MulAdd(LoadWeights(d, row + iw * kChannelBlock), w, acc);
      }
    }
    StoreAs(d, Activate(d, r.activation, acc), r.out + ow * kChannelBlock + lane0);
  }
}

// Output columns [ow, ow + n) of the row, `lane0` onward, n <= kP, taps outside the image
// included: kP sums side by side, each its own chain of multiply-adds (one pixel's 25 taps of a
// 5x5 window one after the other wait 4x their throughput on the latency). Without branches:
// which of a border's taps fall outside changes with every tap, a pattern the predictor misses;
// a tap outside reads column 0 times zero weights. Sums past n are computed, not stored.
template <int64_t kP, typename TX, typename TY>
HWY_NOINLINE void DepthwiseMaskedPixels(const BlockedDepthwiseRow<TX, TY>& r, int64_t lane0, int64_t i0, int64_t i1,
                                        int64_t ow, int64_t n) {
  const DepthwiseD d;
  using V = hn::Vec<DepthwiseD>;
  const V bias = hn::LoadU(d, r.bias + lane0);
  const int64_t row_values = r.in_w * kChannelBlock;
  const TX* plane = r.plane + lane0;
  V acc[kP];
  HWY_UNROLL(8)
  for (int64_t q = 0; q < kP; ++q) acc[q] = bias;
  for (int64_t i = i0; i < i1; ++i) {
    const TX* row = plane + (r.row0 + i * r.dilation_h) * row_values;
    for (int64_t j = 0; j < r.kw; ++j) {
      const V w = hn::LoadU(d, r.weights + (i * r.kw + j) * kChannelBlock + lane0);
      const int64_t iw0 = ow * r.stride_w - r.left + j * r.dilation_w;
      HWY_UNROLL(8)
      for (int64_t q = 0; q < kP; ++q) {
        const int64_t iw = iw0 + q * r.stride_w;
        const bool inside = static_cast<uint64_t>(iw) < static_cast<uint64_t>(r.in_w);
        const V tap = LoadWeights(d, row + (inside ? iw : 0) * kChannelBlock);
        acc[q] = hn::MulAdd(tap, hn::IfThenElseZero(hn::FirstN(d, inside ? kChannelBlock : 0), w), acc[q]);
      }
    }
  }
  HWY_UNROLL(8)
  for (int64_t q = 0; q < kP; ++q) {
    if (q < n) StoreAs(d, Activate(d, r.activation, acc[q]), r.out + (ow + q) * kChannelBlock + lane0);
  }
}

// Output columns [ow0, ow1) with the taps checked (the border columns, or a whole row too narrow
// for the interior paths: a 7-wide map's 5x5 window has 3 interior columns), 8 pixels at a time
// and the rest in the fewest of 2 or 4 (a 3x3 window's border is 1 column).
template <typename TX, typename TY>
HWY_INLINE void DepthwiseBorderColumns(const BlockedDepthwiseRow<TX, TY>& r, int64_t lane0, int64_t i0, int64_t i1,
                                       int64_t ow0, int64_t ow1) {
  int64_t ow = ow0;
  for (; ow + 8 <= ow1; ow += 8) DepthwiseMaskedPixels<8>(r, lane0, i0, i1, ow, 8);
  const int64_t n = ow1 - ow;
  if (n > 4) {
    DepthwiseMaskedPixels<8>(r, lane0, i0, i1, ow, n);
  } else if (n > 2) {
    DepthwiseMaskedPixels<4>(r, lane0, i0, i1, ow, n);
  } else if (n > 1) {
    DepthwiseMaskedPixels<2>(r, lane0, i0, i1, ow, n);
  } else if (n == 1) {
    DepthwiseColumns<false>(r, lane0, i0, i1, ow, ow1);  // one chain either way
  }
}

// The interior of a kK-wide window with undilated columns (MobileNet's 3x3, EfficientNet's and
// MnasNet's 5x5, ConvNeXt's 7x7; stride 1 or 2), kWidePixels outputs at a time: each kernel row's
// input columns are loaded once and shared by the outputs whose windows overlap them, and the
// row's kK weights stay in registers. Per kernel row at stride 1 that is 8 + kK - 1 column loads
// for 8 * kK multiply-adds (3x3: 10 for 24; 5x5: 12 for 40), where one load per multiply-add, plus
// the weight's (DepthwiseColumns), left the 5x5 and 7x7 layers bound on loads. At 1 thread (this AMD EPYC,
// four layers each): 5x5 with SiLU on 672 channels at 14x14, 0.83 -> 0.56 ms; 7x7 on 96 channels
// at 56x56 (ConvNeXt's), 1.9 -> 1.25 ms; 3x3 unchanged (0.85 -> 0.83 ms, 144 channels at 56x56).
// The columns are walked in order, each feeding the sums whose windows hold it, so only the
// sums, the weights and a column or two are live: 8 + 7 + 2 of AVX-512's 32 registers at 7x7.
// On the 16-register targets, 8 sums up to 5x5 (8 + 5 weights + 2 columns) and 6 at 7x7: a sum is
// a chain of dependent multiply-adds, and two FMA pipes of 4 cycles' latency (Zen 3) need 8 chains
// to stay busy. With 4 sums, MobileNetV2's 3x3 layers ran at 1.2x ONNX Runtime's time on AVX2.
template <int64_t kK>
constexpr int64_t WidePixels() {
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
  return 8;
#else
  return kK <= 5 ? 8 : 6;
#endif
}

template <int64_t kK, int64_t kStride, typename TX, typename TY>
HWY_INLINE int64_t DepthwiseInterior(const BlockedDepthwiseRow<TX, TY>& r, int64_t lane0, int64_t i0, int64_t i1,
                                     int64_t ow0, int64_t ow1) {
  const DepthwiseD d;
  using V = hn::Vec<DepthwiseD>;
  constexpr int64_t kWidePixels = WidePixels<kK>();
  constexpr int64_t kColumns = (kWidePixels - 1) * kStride + kK;
  const V bias = hn::LoadU(d, r.bias + lane0);
  const int64_t row_values = r.in_w * kChannelBlock;
  const TX* plane = r.plane + lane0;
  int64_t ow = ow0;
  for (; ow + kWidePixels <= ow1; ow += kWidePixels) {
    V acc[kWidePixels];
    HWY_UNROLL(8)
    for (int64_t q = 0; q < kWidePixels; ++q) acc[q] = bias;
    for (int64_t i = i0; i < i1; ++i) {
      const TX* row = plane + (r.row0 + i * r.dilation_h) * row_values + (ow * kStride - r.left) * kChannelBlock;
      const float* w = r.weights + i * kK * kChannelBlock + lane0;
      V wv[kK];
      HWY_UNROLL(7)
      for (int64_t j = 0; j < kK; ++j) wv[j] = hn::LoadU(d, w + j * kChannelBlock);
      HWY_UNROLL(21)
      for (int64_t c = 0; c < kColumns; ++c) {
        const V col = LoadWeights(d, row + c * kChannelBlock);
        HWY_UNROLL(8)
        for (int64_t q = 0; q < kWidePixels; ++q) {
          const int64_t j = c - q * kStride;  // the tap of output q that reads column c
          if (j >= 0 && j < kK) acc[q] = hn::MulAdd(col, wv[j], acc[q]);
        }
      }
    }
    HWY_UNROLL(8)
    for (int64_t q = 0; q < kWidePixels; ++q) {
      StoreAs(d, Activate(d, r.activation, acc[q]), r.out + (ow + q) * kChannelBlock + lane0);
    }
  }
  return ow;
}

// The wide interior for the window's width and column stride, where there is one: the end of the
// columns it computed (ow0 where none).
template <int64_t kStride, typename TX, typename TY>
HWY_INLINE int64_t DepthwiseWideInterior(const BlockedDepthwiseRow<TX, TY>& r, int64_t lane0, int64_t i0, int64_t i1,
                                         int64_t ow0, int64_t ow1) {
  switch (r.kw) {
    case 3:
      return DepthwiseInterior<3, kStride>(r, lane0, i0, i1, ow0, ow1);
    case 5:
      return DepthwiseInterior<5, kStride>(r, lane0, i0, i1, ow0, ow1);
    case 7:
      return DepthwiseInterior<7, kStride>(r, lane0, i0, i1, ow0, ow1);
    default:
      return ow0;
  }
}

template <typename TX, typename TY>
void DepthwiseRow(const BlockedDepthwiseRow<TX, TY>& r) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(DepthwiseD()));
  // The kernel rows inside the image.
  int64_t i0 = 0, i1 = r.kh;
  while (i0 < i1 && r.row0 + i0 * r.dilation_h < 0) ++i0;
  while (i1 > i0 && r.row0 + (i1 - 1) * r.dilation_h >= r.in_h) --i1;
  // The output columns whose taps all fall inside: [first, last).
  const int64_t span = (r.kw - 1) * r.dilation_w;
  int64_t first = (r.left + r.stride_w - 1) / r.stride_w;
  int64_t last = r.in_w - 1 - span + r.left >= 0 ? (r.in_w - 1 - span + r.left) / r.stride_w + 1 : 0;
  first = std::min(first, r.out_w);
  last = std::max(first, std::min(last, r.out_w));
  for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
    if (last - first < kDepthwisePixels) {  // no interior run: the whole row checked
      DepthwiseBorderColumns(r, lane0, i0, i1, 0, r.out_w);
      continue;
    }
    DepthwiseBorderColumns(r, lane0, i0, i1, 0, first);
    int64_t wide_end = first;
    if (r.dilation_w == 1 && r.stride_w == 1) {
      wide_end = DepthwiseWideInterior<1>(r, lane0, i0, i1, first, last);
    } else if (r.dilation_w == 1 && r.stride_w == 2) {
      wide_end = DepthwiseWideInterior<2>(r, lane0, i0, i1, first, last);
    }
    // The interior's last few columns (fewer than kDepthwisePixels) go with the right border.
    const int64_t runs_end = wide_end + (last - wide_end) / kDepthwisePixels * kDepthwisePixels;
    DepthwiseColumns<true>(r, lane0, i0, i1, wide_end, runs_end);
    DepthwiseBorderColumns(r, lane0, i0, i1, runs_end, r.out_w);
  }
}

// HWY_EXPORT takes one function per name, not a template: one per pair of X and Y types.
void DepthwiseRowImpl(const BlockedDepthwiseRow<float, float>& r) { DepthwiseRow(r); }
void DepthwiseRowHalfXImpl(const BlockedDepthwiseRow<hwy::float16_t, float>& r) { DepthwiseRow(r); }
void DepthwiseRowHalfYImpl(const BlockedDepthwiseRow<float, hwy::float16_t>& r) { DepthwiseRow(r); }
void DepthwiseRowHalfImpl(const BlockedDepthwiseRow<hwy::float16_t, hwy::float16_t>& r) { DepthwiseRow(r); }

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_BLOCKED_DEPTHWISE_INL_H_
