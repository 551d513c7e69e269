// Sliding-window arithmetic along one spatial axis, by the ONNX rules that the convolution and
// pooling ops share: the extent of a dilated kernel, and the pads that auto_pad SAME_UPPER /
// SAME_LOWER ask for.
#pragma once

#include <algorithm>
#include <cstdint>

namespace onnxflow {

// Input positions a kernel of `kernel` taps, `dilation` apart, covers from its first to its last tap.
inline int64_t DilatedWindow(int64_t kernel, int64_t dilation) { return (kernel - 1) * dilation + 1; }

// The same for attributes not yet trusted (a hostile model's dilations near 2^62): false when the
// extent would pass INT64_MAX, which no input can be as long as.
inline bool CheckedDilatedWindow(int64_t kernel, int64_t dilation, int64_t* window) {
  int64_t span = 0;
  if (__builtin_mul_overflow(kernel - 1, dilation, &span) || span == INT64_MAX) return false;
  *window = span + 1;
  return true;
}

struct AxisPads {
  int64_t begin = 0;
  int64_t end = 0;
};

// auto_pad SAME_*: the fewest pads that give ceil(in / stride) output positions. An odd total
// puts the extra pad at the end (SAME_UPPER, `extra_at_end`) or at the beginning (SAME_LOWER).
// Written so that no step passes INT64_MAX for any stride and window (ceil without in + stride - 1;
// (out - 1) * stride is at most in, so subtracting in first keeps the sum in range).
inline AxisPads SamePads(int64_t in, int64_t stride, int64_t window, bool extra_at_end) {
  const int64_t out = in / stride + (in % stride != 0);
  const int64_t total = std::max<int64_t>(0, ((out - 1) * stride - in) + window);
  const int64_t small = total / 2;
  AxisPads pads;
  pads.begin = extra_at_end ? small : total - small;
  pads.end = total - pads.begin;
  return pads;
}

// Window positions along an axis of `padded` inputs (pads included; at least `window`), the last
// one wholly inside: what Conv always outputs and pooling outputs without ceil_mode.
inline int64_t FloorWindowCount(int64_t padded, int64_t window, int64_t stride) {
  return (padded - window) / stride + 1;
}

}  // namespace onnxflow
