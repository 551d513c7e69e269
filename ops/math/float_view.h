// float32 views of float / float16 / bfloat16 tensors: the 16-bit types compute through the float
// GEMM, so their inputs are widened once and the result narrowed once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/framework/numeric.h"

namespace onnxflow {

// True for the types that run on the float GEMM.
inline bool IsFloatLike(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// A float pointer to t's values: t's own data for float32, else a widened copy held in `storage`.
inline const float* FloatData(const Tensor& t, std::vector<float>& storage) {
  if (t.dtype() == DataType::kFloat) return t.data<float>();
  const int64_t n = t.size();
  storage.resize(static_cast<size_t>(n));
  if (t.dtype() == DataType::kFloat16) {
    const Float16* p = t.data<Float16>();
    for (int64_t i = 0; i < n; ++i) storage[i] = HalfToFloat(p[i].bits);
  } else {
    const BFloat16* p = t.data<BFloat16>();
    for (int64_t i = 0; i < n; ++i) storage[i] = BFloat16ToFloat(p[i].bits);
  }
  return storage.data();
}

// Writes n floats into a tensor of type float16/bfloat16 (float32 tensors are written in place
// by the caller and need nothing).
inline void StoreFloats(const float* src, int64_t n, Tensor* t) {
  if (t->dtype() == DataType::kFloat16) {
    Float16* p = t->mutable_data<Float16>();
    for (int64_t i = 0; i < n; ++i) p[i].bits = FloatToHalf(src[i]);
  } else if (t->dtype() == DataType::kBFloat16) {
    BFloat16* p = t->mutable_data<BFloat16>();
    for (int64_t i = 0; i < n; ++i) p[i].bits = FloatToBFloat16(src[i]);
  }
}

// Where float results for `t` go: t's data for float32, else a scratch buffer to StoreFloats later.
inline float* FloatOutput(Tensor* t, std::vector<float>& storage) {
  if (t->dtype() == DataType::kFloat) return t->mutable_data<float>();
  storage.assign(static_cast<size_t>(t->size()), 0.0f);
  return storage.data();
}

// A float view of a float-like tensor that is kept alive with the view.
struct FloatIn {
  std::vector<float> storage;
  const float* data = nullptr;
  int64_t size = 0;
  explicit FloatIn(const Tensor& t) : data(FloatData(t, storage)), size(t.size()) {}
};

// Where a float-like output is computed: the tensor itself for float, else a scratch buffer that
// Finish() narrows into it.
struct FloatOut {
  Tensor* tensor;
  std::vector<float> storage;
  float* data;
  explicit FloatOut(Tensor* t) : tensor(t), data(FloatOutput(t, storage)) {}
  void Finish() { StoreFloats(data, tensor->size(), tensor); }
};

// Plain matrix product for the types without a SIMD path (double, integers): C = A * B with
// row-major A [m, k] (lda), B [k, n] (ldb). Integers wrap around like numpy.
template <typename T, bool kIntegral = std::is_integral_v<T>>
struct WrappingAcc { using type = T; };
template <typename T>
struct WrappingAcc<T, true> { using type = std::make_unsigned_t<T>; };

template <typename T>
void NaiveMatMul(int64_t m, int64_t n, int64_t k, const T* a, int64_t lda, bool trans_a, const T* b, int64_t ldb,
                 bool trans_b, T* c, int64_t ldc) {
  using Acc = typename WrappingAcc<T>::type;
  std::vector<Acc> row(static_cast<size_t>(n));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(row.begin(), row.end(), Acc(0));
    for (int64_t kk = 0; kk < k; ++kk) {
      const Acc av = static_cast<Acc>(trans_a ? a[kk * lda + i] : a[i * lda + kk]);
      if (!trans_b) {
        const T* brow = b + kk * ldb;
        for (int64_t j = 0; j < n; ++j) row[j] += av * static_cast<Acc>(brow[j]);
      } else {
        for (int64_t j = 0; j < n; ++j) row[j] += av * static_cast<Acc>(b[j * ldb + kk]);
      }
    }
    for (int64_t j = 0; j < n; ++j) c[i * ldc + j] = static_cast<T>(row[j]);
  }
}

}  // namespace onnxflow
