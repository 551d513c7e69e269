// Pieces shared by the attention kernels: rounding to a storage type where the spec computes in
// it, and the masked-row-safe softmax (reading and writing any float tensor in a compute type:
// ops/framework/float_tensor.h).
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/framework/numeric.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/float_tensor.h"
#include "ops/framework/kernel.h"
#include "ops/framework/shape.h"
#include "ops/vec/vec_ops.h"

namespace onnxflow {
namespace attention {

// Rounds v to the precision of `dtype` (float16/bfloat16/float/double) and back: the reference
// computes some steps in the storage type, and matching its rounding keeps 16-bit results close.
template <typename C>
C RoundTo(DataType dtype, C v) {
  switch (dtype) {
    case DataType::kFloat16: return static_cast<C>(HalfToFloat(FloatToHalf(static_cast<float>(v))));
    case DataType::kBFloat16: return static_cast<C>(BFloat16ToFloat(FloatToBFloat16(static_cast<float>(v))));
    case DataType::kFloat: return static_cast<C>(static_cast<float>(v));
    default: return v;
  }
}

// True when rounding to `dtype` can change a C value.
template <typename C>
bool NeedsRounding(DataType dtype) {
  if (dtype == DataType::kFloat16 || dtype == DataType::kBFloat16) return true;
  return dtype == DataType::kFloat && std::is_same_v<C, double>;
}

// Softmax of x[0, n) in place. A row whose maximum is -inf (every entry masked) becomes all
// zeros instead of NaN; NaN entries propagate as in any softmax.
template <typename C>
void SoftmaxRow(C* x, int64_t n) {
  if (n <= 0) return;
  C max = x[0];
  bool has_nan = std::isnan(x[0]);
  for (int64_t j = 1; j < n; ++j) {
    if (std::isnan(x[j])) has_nan = true;
    if (x[j] > max) max = x[j];
  }
  if (has_nan) {
    for (int64_t j = 0; j < n; ++j) x[j] = std::numeric_limits<C>::quiet_NaN();
    return;
  }
  if (max == -std::numeric_limits<C>::infinity()) max = 0;
  C sum = vec::ExpShifted(x, n, max);
  if (sum == 0) sum = 1;
  const C inv = C(1) / sum;
  for (int64_t j = 0; j < n; ++j) x[j] *= inv;
}

inline bool IsAttentionFloat(DataType t) {
  return t == DataType::kFloat || t == DataType::kDouble || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

}  // namespace attention
}  // namespace onnxflow
