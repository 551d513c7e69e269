// Highway bodies of pool_rows.h, compiled once per CPU target by pool_rows.cc.
#if defined(ONNXFLOW_OPS_NN_POOL_ROWS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_NN_POOL_ROWS_INL_H_
#undef ONNXFLOW_OPS_NN_POOL_ROWS_INL_H_
#else
#define ONNXFLOW_OPS_NN_POOL_ROWS_INL_H_
#endif

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>

#include "hwy/highway.h"
#include "ops/nn/pool_rows.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

namespace pool_rows {

using DF = hn::ScalableTag<float>;
using VF = hn::Vec<DF>;

template <bool kMax>
HWY_INLINE VF Combine(VF a, VF b) {
  if constexpr (kMax) {
    return hn::Max(a, b);
  } else {
    return hn::Add(a, b);
  }
}

template <bool kMax>
HWY_INLINE float Combine(float a, float b) {
  if constexpr (kMax) {
    return std::max(a, b);
  } else {
    return a + b;
  }
}

template <bool kMax>
constexpr float Neutral() {
  return kMax ? -std::numeric_limits<float>::infinity() : 0.0f;
}

// The last `rem` (< lanes) floats of a row as a vector whose other lanes are `fill`. AVX2 and
// AVX-512 mask the load in hardware (no access past the row); other targets copy through a buffer.
HWY_INLINE VF LoadPartial(DF d, const float* p, size_t rem, float fill) {
#if HWY_TARGET <= HWY_AVX2
  const auto m = hn::FirstN(d, rem);
  return hn::IfThenElse(m, hn::MaskedLoad(m, d, p), hn::Set(d, fill));
#else
  HWY_ALIGN float buf[hn::MaxLanes(DF())];
  for (size_t i = 0; i < hn::Lanes(d); ++i) buf[i] = i < rem ? p[i] : fill;
  return hn::Load(d, buf);
#endif
}

// Stores the first `rem` (< lanes) lanes; AVX2 and AVX-512 mask the store in hardware.
HWY_INLINE void StorePartial(DF d, VF v, float* p, size_t rem) {
#if HWY_TARGET <= HWY_AVX2
  hn::BlendedStore(v, hn::FirstN(d, rem), d, p);
#else
  HWY_ALIGN float buf[hn::MaxLanes(DF())];
  hn::Store(v, d, buf);
  std::memcpy(p, buf, rem * sizeof(float));
#endif
}

// out[0, n) = combination of rows[0..nrows)[0, n); lanes past n up to the next whole vector get
// the neutral value (out has room for them: the scratch row's slack). out may be rows[0].
template <bool kMax>
void CombineRows(const float* const* rows, int64_t nrows, float* out, int64_t n) {
  const DF d;
  const size_t lanes = hn::Lanes(d);
  const size_t count = static_cast<size_t>(n);
  size_t i = 0;
  for (; i + lanes <= count; i += lanes) {
    VF acc = hn::LoadU(d, rows[0] + i);
    for (int64_t r = 1; r < nrows; ++r) acc = Combine<kMax>(acc, hn::LoadU(d, rows[r] + i));
    hn::StoreU(acc, d, out + i);
  }
  if (i < count) {
    const size_t rem = count - i;
    VF acc = LoadPartial(d, rows[0] + i, rem, Neutral<kMax>());
    for (int64_t r = 1; r < nrows; ++r) acc = Combine<kMax>(acc, LoadPartial(d, rows[r] + i, rem, Neutral<kMax>()));
    hn::StoreU(acc, d, out + i);
  }
}

// The window reduction of output columns [j0, j0 + lanes) from the scratch row v.
template <bool kMax>
HWY_INLINE VF WindowStride1(DF d, const float* v, int64_t j0, int64_t kw, int64_t dw) {
  const float* p = v + j0;
  VF acc = hn::LoadU(d, p);
  for (int64_t k = 1; k < kw; ++k) acc = Combine<kMax>(acc, hn::LoadU(d, p + k * dw));
  return acc;
}

#if HWY_TARGET != HWY_SCALAR
// Stride 2: two consecutive vectors from column 2 * j0 + tap hold the tap for `lanes` outputs in
// their even columns and the next tap (dilation 1) in their odd columns.
template <bool kMax>
HWY_INLINE VF WindowStride2(DF d, const float* v, int64_t j0, int64_t kw, int64_t dw) {
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const float* p = v + 2 * j0;
  if (dw == 1) {
    VF lo = hn::LoadU(d, p), hi = hn::LoadU(d, p + lanes);
    VF acc = hn::ConcatEven(d, hi, lo);
    if (kw > 1) acc = Combine<kMax>(acc, hn::ConcatOdd(d, hi, lo));
    for (int64_t k = 2; k < kw; k += 2) {
      lo = hn::LoadU(d, p + k);
      hi = hn::LoadU(d, p + k + lanes);
      acc = Combine<kMax>(acc, hn::ConcatEven(d, hi, lo));
      if (k + 1 < kw) acc = Combine<kMax>(acc, hn::ConcatOdd(d, hi, lo));
    }
    return acc;
  }
  VF acc = hn::ConcatEven(d, hn::LoadU(d, p + lanes), hn::LoadU(d, p));
  for (int64_t k = 1; k < kw; ++k) {
    const float* q = p + k * dw;
    acc = Combine<kMax>(acc, hn::ConcatEven(d, hn::LoadU(d, q + lanes), hn::LoadU(d, q)));
  }
  return acc;
}
#endif

// One output row from the scratch row v.
template <bool kMax>
void Windows(const PoolRowsPlan& plan, const float* v, float row_scale, float* HWY_RESTRICT out) {
  const DF d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t n = plan.out_w, kw = plan.kernel_w, dw = plan.dilation_w, sw = plan.stride_w;
  const float* col_scale = plan.col_scale.data();
  const VF vrow = hn::Set(d, row_scale);
  auto finish = [&](VF acc, int64_t j0) {
    if constexpr (kMax) {
      return acc;
    } else {
      return hn::Mul(hn::Mul(acc, vrow), hn::LoadU(d, col_scale + j0));
    }
  };
  if (sw == 1 || (sw == 2 && HWY_TARGET != HWY_SCALAR)) {
    int64_t j0 = 0;
    for (; j0 < n; j0 += lanes) {
      VF acc;
#if HWY_TARGET != HWY_SCALAR
      if (sw == 2) {
        acc = WindowStride2<kMax>(d, v, j0, kw, dw);
      } else
#endif
      {
        acc = WindowStride1<kMax>(d, v, j0, kw, dw);
      }
      acc = finish(acc, j0);
      if (j0 + lanes <= n) {
        hn::StoreU(acc, d, out + j0);
      } else {
        StorePartial(d, acc, out + j0, static_cast<size_t>(n - j0));
      }
    }
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    const float* p = v + j * sw;
    float acc = p[0];
    for (int64_t k = 1; k < kw; ++k) acc = Combine<kMax>(acc, p[k * dw]);
    out[j] = kMax ? acc : acc * row_scale * col_scale[j];
  }
}

// The vertical pass of output row `oh` of the plane at src into the scratch row `row`.
template <bool kMax>
HWY_INLINE void Vertical(const PoolRowsPlan& plan, const float* src, int64_t oh, float* row) {
  constexpr int64_t kMaxRowsAtOnce = 8;
  const float* rows[kMaxRowsAtOnce];
  float* interior = row + plan.pad_left;
  const int64_t first = plan.row_first[oh], count = plan.row_count[oh];
  if (count == 0) std::fill(interior, interior + plan.in_w, Neutral<kMax>());
  // Rows in groups of up to kMaxRowsAtOnce; later groups fold into the scratch row.
  int64_t r = 0;
  bool started = false;
  while (r < count) {
    int64_t nrows = 0;
    if (started) rows[nrows++] = interior;
    while (r < count && nrows < kMaxRowsAtOnce) rows[nrows++] = src + (first + r++ * plan.dilation_h) * plan.in_w;
    CombineRows<kMax>(rows, nrows, interior, plan.in_w);
    started = true;
  }
}

template <bool kMax>
void Rows(const PoolRowsPlan& plan, const float* x, float* y, int64_t begin, int64_t end, float* scratch) {
  if (begin >= end) return;
  const int64_t row_length = plan.row_length();
  std::fill(scratch, scratch + 2 * row_length, Neutral<kMax>());
  float* buffers[2] = {scratch, scratch + row_length};
  const int64_t in_plane = plan.in_h * plan.in_w;
  // Walk (plane, output row) without a division per row; the vertical pass runs one row ahead.
  int64_t plane = begin / plan.out_h, oh = begin % plan.out_h;
  Vertical<kMax>(plan, x + plane * in_plane, oh, buffers[0]);
  for (int64_t item = begin; item < end; ++item) {
    float* current = buffers[(item - begin) & 1];
    const int64_t this_oh = oh;
    if (++oh == plan.out_h) {
      oh = 0;
      ++plane;
    }
    if (item + 1 < end) Vertical<kMax>(plan, x + plane * in_plane, oh, buffers[(item + 1 - begin) & 1]);
    const float row_scale = kMax ? 1.0f : plan.row_scale[this_oh];
    Windows<kMax>(plan, current, row_scale, y + item * plan.out_w);
  }
}

}  // namespace pool_rows

inline void PoolRowsImpl(const PoolRowsPlan& plan, const float* x, float* y, int64_t begin, int64_t end,
                         float* scratch) {
  if (plan.max) {
    pool_rows::Rows<true>(plan, x, y, begin, end, scratch);
  } else {
    pool_rows::Rows<false>(plan, x, y, begin, end, scratch);
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
