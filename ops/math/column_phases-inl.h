// Splitting a row into its even and odd columns (the "phases" that turn a column stride of 2
// into contiguous runs), with Highway. Compiled per CPU target through hwy/foreach_target.h by
// its includers (column_phases.cc, conv_depthwise.cc).

#if defined(ONNXFLOW_OPS_MATH_COLUMN_PHASES_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_MATH_COLUMN_PHASES_INL_H_
#undef ONNXFLOW_OPS_MATH_COLUMN_PHASES_INL_H_
#else
#define ONNXFLOW_OPS_MATH_COLUMN_PHASES_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// even[q] = row[2q] for 2q < width, odd[q] = row[2q + 1] for 2q + 1 < width. Nothing is read or
// written past those ranges.
HWY_INLINE void SplitEvenOddRow(const float* HWY_RESTRICT row, int64_t width, float* HWY_RESTRICT even,
                                float* HWY_RESTRICT odd) {
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t q = 0;
  for (; 2 * (q + lanes) <= width; q += lanes) {
    hn::Vec<decltype(d)> e, o;
    hn::LoadInterleaved2(d, row + 2 * q, e, o);
    hn::StoreU(e, d, even + q);
    hn::StoreU(o, d, odd + q);
  }
  for (; 2 * q < width; ++q) {
    even[q] = row[2 * q];
    if (2 * q + 1 < width) odd[q] = row[2 * q + 1];
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_MATH_COLUMN_PHASES_INL_H_
