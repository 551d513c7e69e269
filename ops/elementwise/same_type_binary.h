// Broadcast binary ops whose two inputs and output share one type T, as Add..Div and the folds of
// Max/Min/Sum/Mean are: the two loop bodies those kernels have in common.
//
// The float types go through the Highway array function for a FloatBinaryOp (float16 and
// bfloat16 converted to float in blocks); every other type runs a scalar functor, which the
// compiler inlines into the span loops.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/elementwise/broadcast.h"
#include "ops/elementwise/float_simd.h"
#include "ops/framework/kernel.h"
#include "ops/framework/numeric.h"

namespace onnxflow {

// float, float16 and bfloat16: the types that compute in float and so can use FloatBinary.
template <typename T>
inline constexpr bool kComputesInFloat = std::is_same_v<ComputeType<T>, float>;

// FloatBinaryRows (MiddleBroadcast's product: out row r = full row r op row o) for float16 or
// bfloat16 T, widening a block of whole rows at a time and `row` once per o. Through the
// broadcast plan a squeeze-and-excitation Mul of float16 [1, C/16, H, W, 16] by [1, C/16, 1, 1,
// 16] was runs of 16 elements, each widened, multiplied and narrowed by calls of its own: 14x the
// float product's time (EfficientNet-B0 float16 with its depthwise outputs in float16: 0.7 -> 9.6
// ms a run). The same float operations, so the same result.
template <typename T>
void HalfBinaryRows(const KernelContext& ctx, FloatBinaryOp op, const T* full, const T* row, bool row_first, T* out,
                    int64_t outer, int64_t middle, int64_t width) {
  constexpr int64_t kBlock = 1024;  // floats widened at once: whole rows, or a piece of a longer one
  ParallelFor(ctx, outer * middle, width * 4, [&](int64_t begin, int64_t end) {
    float wide[kBlock], result[kBlock];
    std::vector<float> wide_row(static_cast<size_t>(width));
    int64_t widened = -1;  // the o whose row wide_row holds
    for (int64_t r = begin; r < end;) {
      const int64_t o = r / middle;
      if (o != widened) WidenSpan(row + o * width, wide_row.data(), width);
      widened = o;
      const int64_t rows = std::min({end - r, (o + 1) * middle - r, std::max<int64_t>(1, kBlock / width)});
      for (int64_t at = 0; at < width; at += kBlock) {  // one piece unless a row is longer than kBlock
        const int64_t n = std::min(kBlock, width - at);
        const int64_t piece = rows * n;  // rows > 1 only when n == width
        WidenSpan(full + r * width + at, wide, piece);
        FloatBinaryRows(op, wide, wide_row.data() + at, row_first, result, rows, n);
        NarrowSpan(result, out + r * width + at, piece);
      }
      r += rows;
    }
  });
}

// y = a op b for one of the types that compute in float.
template <typename T>
Status RunFloatBinary(const KernelContext& ctx, FloatBinaryOp op, const Tensor& a, const Tensor& b, Tensor* y) {
  static_assert(kComputesInFloat<T>);
  auto float_span = [op](const float* x, bool xb, const float* z, bool zb, float* out, int64_t n) {
    FloatBinary(op, x, xb, z, zb, out, n);
  };
  int64_t outer, middle, width;
  for (const bool row_first : {false, true}) {
    const Tensor& full = row_first ? b : a;
    const Tensor& row = row_first ? a : b;
    if (!MiddleBroadcast(full.shape(), row.shape(), y->shape(), &outer, &middle, &width)) continue;
    if constexpr (!std::is_same_v<T, float>) {
      HalfBinaryRows(ctx, op, full.data<T>(), row.data<T>(), row_first, y->mutable_data<T>(), outer, middle, width);
      return Status::Ok();
    } else {
      const float* f = full.data<float>();
      const float* r = row.data<float>();
      float* out = y->mutable_data<float>();
      ParallelFor(ctx, outer * middle, width, [&](int64_t begin, int64_t end) {
        while (begin < end) {  // rows [begin, end), in pieces that share one `row`
          const int64_t o = begin / middle, stop = std::min(end, (o + 1) * middle);
          FloatBinaryRows(op, f + begin * width, r + o * width, row_first, out + begin * width, stop - begin, width);
          begin = stop;
        }
      });
      return Status::Ok();
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    return RunBinary<float, float, float>(ctx, a, b, y, 1, float_span);
  } else {
    // Converting to float and back costs a few operations per element.
    return RunBinary<T, T, T>(ctx, a, b, y, 4, [&](const T* x, bool xb, const T* z, bool zb, T* out, int64_t n) {
      BinarySpanViaFloat(x, xb, z, zb, out, n, float_span);
    });
  }
}

// y = op(a, b) elementwise for a scalar functor `T op(T, T)`; `cost` as for RunBinary.
template <typename T, typename Op>
Status RunScalarBinary(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor* y, int64_t cost,
                       const Op& op) {
  return RunBinary<T, T, T>(ctx, a, b, y, cost, [&](const T* x, bool xb, const T* z, bool zb, T* out, int64_t n) {
    BinarySpan(x, xb, z, zb, out, n, op);
  });
}

}  // namespace onnxflow
