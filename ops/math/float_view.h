// float32 views of float / float16 / bfloat16 tensors: the 16-bit types compute through the float
// GEMM, so their inputs are widened once and the result narrowed once.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/cast/half_simd.h"
#include "ops/math/gemm_scratch.h"
#include "ops/framework/numeric.h"

namespace onnxflow {

// True for the types that run on the float GEMM.
inline bool IsFloatLike(DataType t) {
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16;
}

// Where a 16-bit tensor's widened copy lives while an op computes in float: a buffer of the GEMM's
// recycled scratch (gemm_scratch.h). A std::vector of the same size came from a fresh mapping on
// most calls once it passed malloc's mapping threshold, and faulting in (and zeroing) its pages
// took more time than the op: an fp16 GroupQueryAttention after 1024 tokens spent 2/3 of its time
// in page faults (perf), and its p50 swung between 19 and 109 ms.
class FloatScratch {
 public:
  // At least n floats, zeroed if asked; earlier contents are not kept.
  float* Take(int64_t n, bool zero) {
    if (buf_.get() == nullptr || buf_.size < n) {
      buf_ = AlignedFloats::Make(n, zero);
    } else if (zero) {
      std::fill(buf_.get(), buf_.get() + n, 0.0f);
    }
    return buf_.get();
  }

 private:
  AlignedFloats buf_;
};

// n 16-bit values (float16 or bfloat16, `type`) widened into out.
inline void WidenHalves(DataType type, const void* in, float* out, int64_t n) {
  if (type == DataType::kFloat16) {
    HalfToFloatArray(static_cast<const uint16_t*>(in), out, n);
  } else {
    BFloat16ToFloatArray(static_cast<const uint16_t*>(in), out, n);
  }
}

// n floats narrowed into 16-bit values of `type` (float16 or bfloat16), rounding to nearest even.
inline void NarrowFloats(const float* in, DataType type, void* out, int64_t n) {
  if (type == DataType::kFloat16) {
    FloatToHalfArray(in, static_cast<uint16_t*>(out), n);
  } else {
    FloatToBFloat16Array(in, static_cast<uint16_t*>(out), n);
  }
}

// Element i of a float-like tensor as a float: one value read where it is needed (a scale), not a
// widened copy of the whole tensor.
inline float FloatAt(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DataType::kFloat16: return HalfToFloat(t.data<Float16>()[i].bits);
    case DataType::kBFloat16: return BFloat16ToFloat(t.data<BFloat16>()[i].bits);
    default: return t.data<float>()[i];
  }
}

// A float pointer to t's values: t's own data for float32, else a widened copy held in `storage`.
inline const float* FloatData(const Tensor& t, FloatScratch& storage) {
  if (t.dtype() == DataType::kFloat) return t.data<float>();
  float* out = storage.Take(t.size(), false);
  WidenHalves(t.dtype(), t.raw_data(), out, t.size());
  return out;
}

// Writes n floats into a tensor of type float16/bfloat16 (float32 tensors are written in place
// by the caller and need nothing).
inline void StoreFloats(const float* src, int64_t n, Tensor* t) {
  if (t->dtype() == DataType::kFloat16 || t->dtype() == DataType::kBFloat16) {
    NarrowFloats(src, t->dtype(), t->mutable_raw_data(), n);
  }
}

// Where float results for `t` go: t's data for float32, else a zeroed scratch buffer to
// StoreFloats later.
inline float* FloatOutput(Tensor* t, FloatScratch& storage) {
  if (t->dtype() == DataType::kFloat) return t->mutable_data<float>();
  return storage.Take(t->size(), true);
}

// A float view of a float-like tensor that is kept alive with the view.
struct FloatIn {
  FloatScratch storage;
  const float* data = nullptr;
  int64_t size = 0;
  explicit FloatIn(const Tensor& t) : data(FloatData(t, storage)), size(t.size()) {}
};

// Where a float-like output is computed: the tensor itself for float, else a scratch buffer that
// Finish() narrows into it.
struct FloatOut {
  Tensor* tensor;
  FloatScratch storage;
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
