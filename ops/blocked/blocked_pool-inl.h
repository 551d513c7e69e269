// SIMD part of the blocked pools (blocked_pool.cc): a pixel of a blocked tensor is 16 channels in
// a row, so a window's max or mean is a vector max or sum over its taps, one output pixel per
// store. X and Y are float or float16 (T); float16 is widened on load and narrowed on store
// (load_weights-inl.h), the arithmetic in between is the float path's. Compiled once per CPU
// target through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_
#endif

#include <limits>

#include "hwy/highway.h"
#include "ops/blocked/blocked_pool_row.h"
#include "ops/blocked/load_weights-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// In two passes: first the window's rows reduced for every input column of the row, then each
// output pixel's columns of those. The chains of dependent maxima (or sums) are 3 long and
// independent instead of one chain of 9 per output (a 3x3/2 max pool 0.132 -> 0.102 ms); windows
// that overlap share the column pass, so a 3x3 window of stride 1 loads 6 vectors per output
// instead of 9 (at stride 2 it is still about 9).
template <bool kMax, typename T>
void PoolRowPasses(const BlockedPoolRow<T>& r) {
  const hn::CappedTag<float, kChannelBlock> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto start = kMax ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
  const auto combine = [](auto a, auto b) { return kMax ? hn::Max(a, b) : hn::Add(a, b); };
  const int64_t row_stride = r.row_step * r.in_w * kChannelBlock;
  const T* top = r.plane + r.row_first * r.in_w * kChannelBlock;
  for (int64_t at = 0; at < r.in_w * kChannelBlock; at += lanes) {
    auto acc = start;
    for (int64_t i = 0; i < r.rows; ++i) acc = combine(acc, LoadWeights(d, top + i * row_stride + at));
    hn::StoreU(acc, d, r.columns + at);
  }
  const int64_t col_stride = r.col_step * kChannelBlock;
  for (int64_t ow = 0; ow < r.out_w; ++ow) {
    const float* first = r.columns + r.col_first[ow] * kChannelBlock;
    for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
      auto acc = start;
      for (int64_t j = 0; j < r.col_count[ow]; ++j) acc = combine(acc, hn::LoadU(d, first + j * col_stride + lane0));
      if (!kMax) acc = hn::Mul(acc, hn::Set(d, r.scale[ow]));
      StoreAs(d, acc, r.out + ow * kChannelBlock + lane0);
    }
  }
}

// A window of 3 rows and 3 adjacent columns at stride kStride (the 3x3/2 MaxPool after a
// network's stem, Inception's 3x3/1 pools), in one pass: each output reduces its columns as it
// needs them, in registers, and the columns it shares with the next output carry over. Half the
// instructions of the two passes. Outputs whose window the image's border cuts take the one
// generic path per output instead.
template <bool kMax, int64_t kStride, typename T>
void PoolRowThreeByThree(const BlockedPoolRow<T>& r) {
  const hn::CappedTag<float, kChannelBlock> d;
  using V = hn::Vec<decltype(d)>;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto combine = [](V a, V b) HWY_ATTR { return kMax ? hn::Max(a, b) : hn::Add(a, b); };
  const int64_t row_floats = r.in_w * kChannelBlock;
  const T* top = r.plane + r.row_first * row_floats;
  const auto column = [&](int64_t col, int64_t lane0) HWY_ATTR {
    const T* at = top + col * kChannelBlock + lane0;
    return combine(combine(LoadWeights(d, at), LoadWeights(d, at + row_floats)), LoadWeights(d, at + 2 * row_floats));
  };
  const auto store = [&](V acc, int64_t o, int64_t lane0) HWY_ATTR {
    if (!kMax) acc = hn::Mul(acc, hn::Set(d, r.scale[o]));
    StoreAs(d, acc, r.out + o * kChannelBlock + lane0);
  };
  // The outputs with all 3 columns inside: [begin, end).
  int64_t begin = 0, end = r.out_w;
  while (begin < end && r.col_count[begin] != 3) ++begin;
  while (end > begin && r.col_count[end - 1] != 3) --end;
  for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
    for (int64_t o = 0; o < r.out_w; ++o) {  // the border: 1 or 2 columns inside (0: -inf or NaN)
      if (o == begin) o = end;
      if (o >= r.out_w) break;
      V acc = kMax ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
      for (int64_t j = 0; j < r.col_count[o]; ++j) acc = combine(acc, column(r.col_first[o] + j, lane0));
      store(acc, o, lane0);
    }
    if (begin == end) continue;
    const int64_t first = r.col_first[begin];
    V c0 = column(first, lane0);
    V c1 = kStride == 1 ? column(first + 1, lane0) : c0;  // at stride 2 each output loads its own middle
    for (int64_t o = begin; o < end; ++o) {
      const int64_t col = first + (o - begin) * kStride;
      if (kStride == 2) c1 = column(col + 1, lane0);
      const V c2 = column(col + 2, lane0);
      store(combine(combine(c0, c1), c2), o, lane0);
      c0 = kStride == 2 ? c2 : c1;
      c1 = c2;
    }
  }
}

template <typename T>
void PoolRow(const BlockedPoolRow<T>& r) {
  if (r.rows == 3 && r.row_step == 1 && r.kernel_w == 3 && r.col_step == 1 && (r.stride_w == 1 || r.stride_w == 2)) {
    if (r.stride_w == 1) {
      r.max ? PoolRowThreeByThree<true, 1>(r) : PoolRowThreeByThree<false, 1>(r);
    } else {
      r.max ? PoolRowThreeByThree<true, 2>(r) : PoolRowThreeByThree<false, 2>(r);
    }
    return;
  }
  r.max ? PoolRowPasses<true>(r) : PoolRowPasses<false>(r);
}

// HWY_EXPORT takes one function per name, not a template or an overload set.
void PoolRowImpl(const BlockedPoolRow<float>& r) { PoolRow(r); }
void PoolRowHalfImpl(const BlockedPoolRow<hwy::float16_t>& r) { PoolRow(r); }

// out[16] = max or mean over `pixels` pixels of one block.
template <typename T>
void ReducePixels(const T* HWY_RESTRICT block, int64_t pixels, bool max, T* HWY_RESTRICT out) {
  const hn::CappedTag<float, kChannelBlock> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
    auto acc = max ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
    for (int64_t p = 0; p < pixels; ++p) {
      const auto v = LoadWeights(d, block + p * kChannelBlock + lane0);
      acc = max ? hn::Max(acc, v) : hn::Add(acc, v);
    }
    if (!max) acc = hn::Div(acc, hn::Set(d, static_cast<float>(pixels)));
    StoreAs(d, acc, out + lane0);
  }
}

void ReducePixelsImpl(const float* block, int64_t pixels, bool max, float* out) {
  ReducePixels(block, pixels, max, out);
}
void ReducePixelsHalfImpl(const hwy::float16_t* block, int64_t pixels, bool max, hwy::float16_t* out) {
  ReducePixels(block, pixels, max, out);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_
