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

// y = a op b for one of the types that compute in float.
template <typename T>
Status RunFloatBinary(const KernelContext& ctx, FloatBinaryOp op, const Tensor& a, const Tensor& b, Tensor* y) {
  static_assert(kComputesInFloat<T>);
  auto float_span = [op](const float* x, bool xb, const float* z, bool zb, float* out, int64_t n) {
    FloatBinary(op, x, xb, z, zb, out, n);
  };
  if constexpr (std::is_same_v<T, float>) {
    int64_t outer, middle, width;
    for (const bool row_first : {false, true}) {
      const Tensor& full = row_first ? b : a;
      const Tensor& row = row_first ? a : b;
      if (!MiddleBroadcast(full.shape(), row.shape(), y->shape(), &outer, &middle, &width)) continue;
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
