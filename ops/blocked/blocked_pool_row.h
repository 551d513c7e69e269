// One output row of a blocked pool, as blocked_pool.cc hands it to the SIMD code
// (blocked_pool-inl.h).
#pragma once

#include <cstdint>

#include "hwy/base.h"
#include "ops/blocked/blocked_layout.h"

namespace onnxflow {

// T: the element type of X and Y, float or hwy::float16_t (a float16 model's activations). The
// arithmetic is float either way: float16 is widened as it is loaded and rounded to nearest even
// as it is stored, so Y is the float pool's result on the widened X, rounded once.
template <typename T>
struct BlockedPoolRow {
  const T* plane = nullptr;  // one channel block of one image: [H][W][16]
  int64_t in_w = 0;
  int64_t row_first = 0, rows = 0, row_step = 1;  // the window's input rows inside the image
  const int64_t* col_first = nullptr;             // per output column: its first input column inside
  const int64_t* col_count = nullptr;             //   the image, and how many taps are inside
  int64_t col_step = 1;                           // the columns' dilation
  int64_t kernel_w = 1, stride_w = 1;
  const float* scale = nullptr;  // average: per output column, 1 / the taps counted
  int64_t out_w = 0;
  float* columns = nullptr;  // scratch of in_w x 16 floats: the window's rows reduced per column
  T* out = nullptr;          // [out_w][16]
  bool max = true;
};

void RunBlockedPoolRow(const BlockedPoolRow<float>& row);
void RunBlockedPoolRow(const BlockedPoolRow<hwy::float16_t>& row);
// out[16] = max or mean over `pixels` pixels of one block.
void ReduceBlockedPixels(const float* block, int64_t pixels, bool max, float* out);
void ReduceBlockedPixels(const hwy::float16_t* block, int64_t pixels, bool max, hwy::float16_t* out);

}  // namespace onnxflow
