// Tensors of a fixed pattern in float, float16 or bfloat16 for the float16 storage tests
// (blocked_half_test.cc, blocked_half_transformer_test.cc): the same values for each seed.
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/framework/numeric.h"

namespace onnxflow::graph {

// `v` as a tensor of `type`: float, float16 or bfloat16.
inline Tensor Typed(DataType type, const std::vector<int64_t>& shape, const std::vector<float>& v) {
  if (type == DataType::kFloat) return Tensor::FromVector<float>(shape, v);
  if (type == DataType::kBFloat16) {
    std::vector<BFloat16> b;
    for (float f : v) b.push_back(BFloat16{FloatToBFloat16(f)});
    return Tensor::FromVector<BFloat16>(shape, b);
  }
  std::vector<Float16> h;
  for (float f : v) h.push_back(Float16{FloatToHalf(f)});
  return Tensor::FromVector<Float16>(shape, h);
}

// Values in [-11/64, 11/64], exact in every one of the three types.
inline Tensor PatternValues(DataType type, const std::vector<int64_t>& shape, int seed) {
  std::vector<float> v;
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<float>((i * 37 + seed * 11) % 23 - 11) / 64.0f);
  return Typed(type, shape, v);
}

}  // namespace onnxflow::graph
