// Helpers for the elementwise and activation unit tests (testonly).
#pragma once

#include <cstdint>
#include <random>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/framework/numeric.h"

namespace onnxflow {
namespace testing_util {

// A tensor of element type T from doubles (converted through T's compute type).
template <typename T>
Tensor MakeTensor(Shape shape, const std::vector<double>& values) {
  std::vector<T> v;
  v.reserve(values.size());
  for (double x : values) v.push_back(FromCompute<T>(static_cast<ComputeType<T>>(x)));
  return Tensor::FromVector<T>(std::move(shape), v);
}

// n floats uniform in [lo, hi), deterministic per seed.
inline std::vector<float> RandomFloats(int64_t n, float lo, float hi, uint32_t seed = 7) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Sizes that exercise full vectors, tails, and more than one ParallelFor chunk of work.
inline const std::vector<int64_t>& OddSizes() {
  static const std::vector<int64_t> sizes = {1, 3, 7, 16, 17, 31, 33, 64, 65, 1000, 1031};
  return sizes;
}

}  // namespace testing_util
}  // namespace onnxflow
