// SIMD part of the blocked pools (blocked_pool.cc): a pixel of a blocked tensor is 16 channels in
// a row, so a window's max or mean is a vector max or sum over its taps, one output pixel per
// store. Compiled once per CPU target through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_
#undef ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_
#else
#define ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_
#endif

#include <limits>

#include "hwy/highway.h"
#include "ops/blocked/blocked_pool_row.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// In two passes: first the window's rows reduced for every input column of the row, then each
// output pixel's columns of those. The chains of dependent maxima (or sums) are 3 long and
// independent instead of one chain of 9 per output (a 3x3/2 max pool 0.132 -> 0.102 ms); windows
// that overlap share the column pass, so a 3x3 window of stride 1 loads 6 vectors per output
// instead of 9 (at stride 2 it is still about 9).
template <bool kMax>
void PoolRowPasses(const BlockedPoolRow& r) {
  const hn::CappedTag<float, kChannelBlock> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const auto start = kMax ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
  const auto combine = [](auto a, auto b) { return kMax ? hn::Max(a, b) : hn::Add(a, b); };
  const int64_t row_stride = r.row_step * r.in_w * kChannelBlock;
  const float* top = r.plane + r.row_first * r.in_w * kChannelBlock;
  for (int64_t at = 0; at < r.in_w * kChannelBlock; at += lanes) {
    auto acc = start;
    for (int64_t i = 0; i < r.rows; ++i) acc = combine(acc, hn::LoadU(d, top + i * row_stride + at));
    hn::StoreU(acc, d, r.columns + at);
  }
  const int64_t col_stride = r.col_step * kChannelBlock;
  for (int64_t ow = 0; ow < r.out_w; ++ow) {
    const float* first = r.columns + r.col_first[ow] * kChannelBlock;
    for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
      auto acc = start;
      for (int64_t j = 0; j < r.col_count[ow]; ++j) acc = combine(acc, hn::LoadU(d, first + j * col_stride + lane0));
      if (!kMax) acc = hn::Mul(acc, hn::Set(d, r.scale[ow]));
      hn::StoreU(acc, d, r.out + ow * kChannelBlock + lane0);
    }
  }
}

void PoolRowImpl(const BlockedPoolRow& r) { r.max ? PoolRowPasses<true>(r) : PoolRowPasses<false>(r); }

// out[16] = max or mean over `pixels` pixels of one block.
void ReducePixelsImpl(const float* HWY_RESTRICT block, int64_t pixels, bool max, float* HWY_RESTRICT out) {
  const hn::CappedTag<float, kChannelBlock> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  for (int64_t lane0 = 0; lane0 < kChannelBlock; lane0 += lanes) {
    auto acc = max ? hn::Set(d, -std::numeric_limits<float>::infinity()) : hn::Zero(d);
    for (int64_t p = 0; p < pixels; ++p) {
      const auto v = hn::LoadU(d, block + p * kChannelBlock + lane0);
      acc = max ? hn::Max(acc, v) : hn::Add(acc, v);
    }
    if (!max) acc = hn::Div(acc, hn::Set(d, static_cast<float>(pixels)));
    hn::StoreU(acc, d, out + lane0);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_BLOCKED_BLOCKED_POOL_INL_H_
