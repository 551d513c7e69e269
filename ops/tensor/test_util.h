// Helpers for the tensor family's unit tests: element generators for every dtype, a run-and-get
// wrapper around OpTest, and exact comparison for any dtype (bytes for plain types).
#pragma once

#include <complex>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/tensor/register.h"

namespace onnxflow {
namespace tensor_test {

// A distinct, deterministic value of type T for position i.
template <typename T>
T Make(int64_t i) {
  if constexpr (std::is_same_v<T, std::string>) {
    return "s" + std::to_string(i);
  } else if constexpr (std::is_same_v<T, bool>) {
    return i % 3 == 0;
  } else if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return FromCompute<T>(static_cast<float>(i % 200) - 50.0f);
  } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    return T(static_cast<typename T::value_type>(i), static_cast<typename T::value_type>(-i));
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(i) * T(0.5) + T(1);
  } else if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(i);  // wraps for narrow types
  } else {
    T t;
    std::memset(&t, static_cast<int>(i % 7), sizeof(T));  // float8 / int4 / ... storage structs
    return t;
  }
}

template <typename T>
Tensor Iota(const Shape& shape, int64_t offset = 0) {
  Tensor t(DataTypeOf<T>::value, shape);
  T* p = t.mutable_data<T>();
  for (int64_t i = 0; i < t.size(); ++i) p[i] = Make<T>(i + offset);
  return t;
}

// Exact equality of dtype, shape and every element (bytes for plain types).
inline ::testing::AssertionResult Same(const Tensor& expected, const Tensor& actual) {
  if (expected.dtype() != actual.dtype()) {
    return ::testing::AssertionFailure() << "dtype " << DataTypeName(actual.dtype()) << ", expected "
                                         << DataTypeName(expected.dtype());
  }
  if (expected.shape() != actual.shape()) {
    return ::testing::AssertionFailure() << "shape " << ShapeToString(actual.shape()) << ", expected "
                                         << ShapeToString(expected.shape());
  }
  if (expected.dtype() == DataType::kString) return TensorsEqual(expected, actual);
  const size_t elem = ElementSize(expected.dtype());
  for (int64_t i = 0; i < expected.size(); ++i) {
    if (std::memcmp(static_cast<const char*>(expected.raw_data()) + i * elem,
                    static_cast<const char*>(actual.raw_data()) + i * elem, elem) != 0) {
      return ::testing::AssertionFailure() << "element " << i << " differs";
    }
  }
  return ::testing::AssertionSuccess();
}

inline Result<std::vector<Value>> RunOp(OpTest& test) { return test.Run(RegisterTensorKernels); }

// Output 0 as a tensor; records a test failure and returns an empty tensor on error.
inline Tensor Out(OpTest& test) {
  auto r = RunOp(test);
  if (!r.ok()) {
    ADD_FAILURE() << r.status().ToString();
    return Tensor();
  }
  if (r->empty() || !(*r)[0].is_tensor()) {
    ADD_FAILURE() << "output 0 is not a tensor";
    return Tensor();
  }
  return (*r)[0].tensor();
}

inline Tensor I64(const Shape& shape, const std::vector<int64_t>& v) { return Tensor::FromVector<int64_t>(shape, v); }
inline Tensor I64(const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>({static_cast<int64_t>(v.size())}, v);
}
inline Tensor F32(const Shape& shape, const std::vector<float>& v) { return Tensor::FromVector<float>(shape, v); }

// Every element type, for typed tests of type-generic ops.
using AllTypes = ::testing::Types<float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t,
                                  uint16_t, uint32_t, uint64_t, bool, std::string, std::complex<float>,
                                  std::complex<double>, Float8E4M3FN, Float8E5M2, UInt4, Int4>;

}  // namespace tensor_test
}  // namespace onnxflow
