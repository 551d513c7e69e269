// A tensor of any float element type (float, double, float16, bfloat16) read and written as a
// compute type C: kernels that compute in one type whatever their tensors' types (attention in
// float or double, the row normalizations) convert at the edges with these.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"

namespace onnxflow {

// The tensor's elements as C: the tensor's own storage when it already is C, else a converted copy
// kept in `storage`.
template <typename T, typename C>
const C* AsCompute(const Tensor& t, std::vector<C>& storage) {
  if constexpr (std::is_same_v<T, C>) {
    return t.data<T>();
  } else {
    const T* src = t.data<T>();
    storage.resize(static_cast<size_t>(t.size()));
    for (int64_t i = 0; i < t.size(); ++i) storage[i] = static_cast<C>(ToCompute<T>(src[i]));
    return storage.data();
  }
}

template <typename T, typename C>
void StoreAs(const C* src, int64_t n, T* dst) {
  for (int64_t i = 0; i < n; ++i) dst[i] = FromCompute<T>(static_cast<ComputeType<T>>(src[i]));
}

// A float tensor of any float element type read as C (a copy unless it already is C).
template <typename C>
Result<const C*> ReadFloatTensor(const Tensor& t, std::vector<C>& storage, const char* what) {
  const C* out = nullptr;
  Status s = DispatchType<float, double, Float16, BFloat16>(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    out = AsCompute<T, C>(t, storage);
    return Status::Ok();
  });
  if (!s.ok()) return InvalidArgument(std::string(what) + " must be a float tensor, got " + DataTypeName(t.dtype()));
  return out;
}

// Writes n C values into `dst` (a float tensor of any float element type).
template <typename C>
Status WriteFloatTensor(const C* src, int64_t n, Tensor* dst) {
  return DispatchType<float, double, Float16, BFloat16>(dst->dtype(), [&](auto tag) {
    using T = decltype(tag);
    StoreAs<T, C>(src, n, dst->mutable_data<T>());
    return Status::Ok();
  });
}

}  // namespace onnxflow
