// Helpers shared by the normalization kernels: the compute type of an element type, converting a
// tensor to and from it, parameter vectors (scale, bias, mean, var) of any float type, the row
// operations for float (SIMD) and double (scalar), and the mean and variance built on them.
#pragma once

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/kernel.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/nn/row_kernels.h"

namespace onnxflow {

// double computes in double; float, float16 and bfloat16 in float.
template <typename T>
using NormCompute = std::conditional_t<std::is_same<T, double>::value, double, float>;

// Row operations in compute type C (float: the SIMD row kernels; double: plain loops).
template <typename C> struct Rows;

template <>
struct Rows<float> {
  static double Sum(const float* x, int64_t n) { return RowSum(x, n); }
  static double SumSquaredDiff(const float* x, float c, int64_t n) { return RowSumSquaredDiff(x, c, n); }
  static void Affine(const float* x, float a, float b, float* y, int64_t n) { AffineRow(x, a, b, y, n); }
  static void Normalize(const float* x, float mean, float inv, const float* scale, const float* bias, float* y,
                        int64_t n) {
    NormalizeRow(x, mean, inv, scale, bias, y, n);
  }
};

template <>
struct Rows<double> {
  static double Sum(const double* x, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += x[i];
    return s;
  }
  static double SumSquaredDiff(const double* x, double c, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; ++i) s += (x[i] - c) * (x[i] - c);
    return s;
  }
  static void Affine(const double* x, double a, double b, double* y, int64_t n) {
    for (int64_t i = 0; i < n; ++i) y[i] = x[i] * a + b;
  }
  static void Normalize(const double* x, double mean, double inv, const double* scale, const double* bias, double* y,
                        int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      double r = (x[i] - mean) * inv;
      if (scale != nullptr) r *= scale[i];
      if (bias != nullptr) r += bias[i];
      y[i] = r;
    }
  }
};

// Population mean and variance over `rows` rows of `length` values each, `stride` apart, in two
// passes (the mean, then squared deviations from it) for accuracy; zeros when there are no values.
struct Moments {
  double mean = 0;
  double var = 0;
};
template <typename C>
Moments MeanAndVariance(const C* x, int64_t rows, int64_t length, int64_t stride) {
  if (rows * length <= 0) return Moments();
  const double count = static_cast<double>(rows * length);
  double sum = 0;
  for (int64_t r = 0; r < rows; ++r) sum += Rows<C>::Sum(x + r * stride, length);
  Moments m;
  m.mean = sum / count;
  const C mean = static_cast<C>(m.mean);
  double squares = 0;
  for (int64_t r = 0; r < rows; ++r) squares += Rows<C>::SumSquaredDiff(x + r * stride, mean, length);
  m.var = squares / count;
  return m;
}
// The same over one contiguous row of n values.
template <typename C>
Moments MeanAndVariance(const C* x, int64_t n) {
  return MeanAndVariance(x, 1, n, n);
}

// X = [N, C, D1, ...] as N * C planes of D1 * ... values: how the per-channel normalizations
// (BatchNormalization, InstanceNormalization, GroupNormalization) see it.
struct ChannelPlanes {
  int64_t batch = 0;
  int64_t channels = 0;
  int64_t plane = 0;
};
inline Result<ChannelPlanes> AsChannelPlanes(const Tensor& x) {
  if (x.rank() < 2) return InvalidArgument("input 'X' must have rank >= 2, got shape " + ShapeToString(x.shape()));
  ChannelPlanes p;
  p.batch = x.dim(0);
  p.channels = x.dim(1);
  p.plane = SizeFromDim(x.shape(), 2);
  return p;
}

// body(T{}) for `type`, one of the float types every normalization op takes.
template <typename Body>
Status DispatchNormType(DataType type, const Body& body) {
  return DispatchType<float, double, Float16, BFloat16>(type, body);
}

// Compute() of the per-channel normalization kernels: X (input 0) as channel planes, then
// kernel.Run<T>(ctx, x, planes) with T the element type of X.
template <typename Kernel>
Status RunOnChannelPlanes(const Kernel& kernel, KernelContext& ctx) {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  ONNXFLOW_ASSIGN_OR_RETURN(const ChannelPlanes planes, AsChannelPlanes(*x));
  return DispatchNormType(x->dtype(),
                          [&](auto tag) { return kernel.template Run<decltype(tag)>(ctx, *x, planes); });
}

// The elements of x in compute type C: x's own data when T is C, else a converted copy.
template <typename C, typename T>
const C* ComputeView(const T* x, int64_t n, std::vector<C>& storage) {
  if constexpr (std::is_same<T, C>::value) {
    return x;
  } else {
    storage.resize(n);
    for (int64_t i = 0; i < n; ++i) storage[i] = static_cast<C>(ToCompute(x[i]));
    return storage.data();
  }
}

// Where to write results in compute type C: y itself when T is C, else a buffer for StoreBack.
template <typename C, typename T>
C* ComputeOut(T* y, int64_t n, std::vector<C>& storage) {
  if constexpr (std::is_same<T, C>::value) {
    return y;
  } else {
    storage.resize(n);
    return storage.data();
  }
}
template <typename C, typename T>
void StoreBack(const C* result, T* y, int64_t n) {
  if constexpr (!std::is_same<T, C>::value) {
    for (int64_t i = 0; i < n; ++i) y[i] = FromCompute<T>(static_cast<ComputeType<T>>(result[i]));
  }
}

// A float-typed parameter tensor (any of float, double, float16, bfloat16) as a vector of C.
template <typename C>
Result<std::vector<C>> ParamVector(const Tensor& t, const std::string& name) {
  std::vector<C> out(t.size());
  Status s = DispatchNormType(t.dtype(), [&](auto tag) {
    using P = decltype(tag);
    const P* p = t.data<P>();
    for (int64_t i = 0; i < t.size(); ++i) out[i] = static_cast<C>(ToCompute(p[i]));
    return Status::Ok();
  });
  if (!s.ok()) return InvalidArgument("input '" + name + "': " + s.message());
  return out;
}

// A parameter of `count` values (or one value broadcast to all).
template <typename C>
Result<std::vector<C>> ParamOfSize(const Tensor& t, const std::string& name, int64_t count) {
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<C> v, ParamVector<C>(t, name));
  if (static_cast<int64_t>(v.size()) == count) return v;
  if (v.size() == 1) return std::vector<C>(count, v[0]);
  return InvalidArgument("input '" + name + "' has " + std::to_string(v.size()) + " elements, expected " +
                         std::to_string(count) + " (shape " + ShapeToString(t.shape()) + ")");
}

}  // namespace onnxflow
