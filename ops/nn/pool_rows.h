// Float32 SIMD fast path of 2-D (and 1-D) max and average pooling over NCHW planes, without
// Indices (bodies in pool_rows-inl.h, dispatched per CPU target by pool_rows.cc).
//
// Each output row is made in two passes through a scratch row that stays in L1:
//   1. vertical: the input rows under the window are combined (max or sum) into the scratch row,
//      which has the left/right padding around it pre-filled with the neutral value (-inf or 0);
//   2. horizontal: every output column reduces kernel_w taps of the scratch row, a vector of output
//      columns at a time. Stride 1 loads each tap unaligned; stride 2 loads two vectors and splits
//      them into even and odd columns; other strides go element by element.
// Because the padding is in the scratch row, neither pass tests bounds. Average pooling scales each
// output by 1 / (taps counted in its row) * 1 / (taps counted in its column), which covers both
// count_include_pad settings and the short windows at the borders and under ceil_mode.
#pragma once

#include <cstdint>
#include <vector>

namespace onnxflow {

// Slack after the last output column / input column in the scratch row and col_scale, in floats:
// at least one vector of the widest target (so whole-vector loads past the end stay inside).
inline constexpr int64_t kPoolRowsSlack = 64;

struct PoolRowsPlan {
  bool max = true;
  int64_t in_h = 1, in_w = 1, out_h = 1, out_w = 1;
  int64_t kernel_w = 1, stride_w = 1, dilation_w = 1, dilation_h = 1;
  int64_t pad_left = 0;  // scratch column 0 is input column -pad_left
  // Per output row: the first input row under the window that is inside the input, and how many
  // rows (dilation_h apart) are inside.
  std::vector<int64_t> row_first, row_count;
  // Average only: per output row and column, 1 / taps counted; col_scale has kPoolRowsSlack extra
  // zeros at the end.
  std::vector<float> row_scale, col_scale;

  // Floats of one scratch row.
  int64_t row_length() const { return RowLength<int64_t>(pad_left, in_w, out_w, stride_w, kernel_w, dilation_w); }
  // The same for dims not yet known to fit (N = double: a hostile model's pads and strides would
  // carry the int64 sum past INT64_MAX).
  template <typename N>
  static N RowLength(N pad_left, N in_w, N out_w, N stride_w, N kernel_w, N dilation_w) {
    const N by_input = pad_left + in_w + kPoolRowsSlack;
    const N by_output = (out_w + kPoolRowsSlack) * stride_w + (kernel_w - 1) * dilation_w + 2;
    return by_input > by_output ? by_input : by_output;
  }
  // Floats of scratch PoolRows needs: two rows, so that the vertical pass of the next output row
  // runs while the stores into the current one complete (reading a row straight back with loads
  // that straddle the stores would stall on store forwarding).
  int64_t scratch_length() const { return 2 * row_length(); }
};

// Output rows [begin, end) of all planes, numbered plane * out_h + output row: x and y point to the
// first plane of the input [planes, in_h, in_w] and output [planes, out_h, out_w]. `scratch` holds
// plan.scratch_length() floats and belongs to the caller's thread.
void PoolRows(const PoolRowsPlan& plan, const float* x, float* y, int64_t begin, int64_t end, float* scratch);

}  // namespace onnxflow
