// What the GEMM driver (gemm.cc) hands the SIMD macro-kernel (gemm-inl.h) for one block of C:
// a range of packed A strips, a range of B strips and one K block. Internal to ops/math.
#pragma once

#include <cstdint>
#include <functional>

#include "ops/math/gemm.h"

namespace onnxflow {
namespace gemm_internal {

struct GemmBlock {
  const float* a = nullptr;      // first A strip of the block, advanced to the block's first k;
                                 // or, when a_row_offsets is set, the base A is gathered from
  const int64_t* a_row_offsets = nullptr;  // when set, A (m, k) is a[a_row_offsets[m] + a_col_offsets[k]]
  const int64_t* a_col_offsets = nullptr;  // (both at the block's first row and k), or a[a_row_offsets[m] + k]
                                           // without column offsets (`a` then at the block's first k)
  int64_t a_strip_stride = 0;    // floats between consecutive A strips
  int64_t m = 0;                 // rows of C in the block (the last strip may be partial)
  const float* b = nullptr;      // first B strip, advanced to the block's first k row
  int64_t b_strip_stride = 0;    // floats between consecutive B strips
  int64_t b_row_stride = 0;      // floats between k rows inside a strip (nr packed, ldb raw)
  bool stream_b = false;         // B comes from memory on its first pass (packed at load)
  bool b_outer = false;          // stream_b: B strips outside, A strips inside (GemmPlan::b_outer)
  const float* next_b = nullptr; // b_outer: the first B strip of the block this task runs next
  const float* b_tail = nullptr; // when set, the last strip of the block is read from here
                                 // instead (packed, row stride nr, advanced to the first k)
  const uint16_t* b_half = nullptr;  // when set (one row of A, packed), B's strips are float16
                                 // here instead (strides b_strip_stride, b_row_stride), widened
                                 // as they are read: a half model's weights (BPanelSource::HalfStrips)
  bool b_half_bf16 = false;      // b_half holds bfloat16, not float16
  const uint16_t* next_half = nullptr;  // when set (a half B widened a few strips at a time), the
  int64_t next_half_strip_stride = 0;   // 16-bit strips this task widens next: requested a share
                                 // per tile while this block runs (RunBlockImpl)
  const int64_t* b_row_offsets = nullptr;  // when set, B is read in place: element (k, j) of
                                 // strip t is b[t * b_strip_stride + b_row_offsets[k] + j]
  int64_t n = 0;                 // columns of C in the block
  int64_t kc = 0;                // depth of this K block
  float* c = nullptr;            // C at the block's first row and column
  int64_t ldc = 0;
  bool load_c = false;           // add to the values in C
  const float* addend = nullptr; // else, when set, start from these values (at the block's first
                                 // row and column, leading dimension ldc)
  bool last = false;             // last K block: apply the epilogue
  // When set (last K block only), called with (first row, rows, first column, columns) in the
  // whole C's coordinates as each strip of rows of the block is finished.
  const std::function<void(int64_t, int64_t, int64_t, int64_t)>* rows_done = nullptr;
  int64_t row0 = 0, col0 = 0;    // the block's position in the whole C, for rows_done
  const float* row_bias = nullptr;  // at the block's first row
  const float* col_bias = nullptr;  // at the block's first column
  ActivationSpec activation;
};

}  // namespace gemm_internal
}  // namespace onnxflow
