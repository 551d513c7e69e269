// Ops whose output size depends on the values: NonZero, Compress, Unique.
#include <algorithm>
#include <cmath>
#include <complex>
#include <numeric>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

#define ONNXFLOW_VALUE_TYPES ONNXFLOW_ALL_TYPES, std::complex<float>, std::complex<double>

template <typename T>
bool IsNonZero(const T& v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return !v.empty();
  } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    return v.real() != 0 || v.imag() != 0;
  } else {
    return ToCompute(v) != ComputeType<T>(0);
  }
}

// A strict weak order for sorting values: NaNs after everything and equal to each other;
// complex numbers by real part, then imaginary part.
template <typename T>
bool ValueLess(const T& a, const T& b) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    if (ValueLess(a.real(), b.real())) return true;
    if (ValueLess(b.real(), a.real())) return false;
    return ValueLess(a.imag(), b.imag());
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool> || std::is_integral_v<T>) {
    return a < b;
  } else {
    const auto x = ToCompute(a), y = ToCompute(b);
    if (std::isnan(y)) return !std::isnan(x);
    if (std::isnan(x)) return false;
    return x < y;
  }
}

// NonZero: int64 [rank, nnz], the coordinates of non-zero elements in row-major order. A scalar
// is treated as a 1-element vector.
class NonZeroKernel : public OpKernel {
 public:
  explicit NonZeroKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const Shape shape = x->rank() == 0 ? Shape{1} : x->shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    std::vector<int64_t> hits;
    ONNXFLOW_RETURN_IF_ERROR(DispatchType<ONNXFLOW_VALUE_TYPES>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* v = x->data<T>();
      for (int64_t i = 0; i < x->size(); ++i) {
        if (IsNonZero(v[i])) hits.push_back(i);
      }
      return Status::Ok();
    }));
    const int64_t nnz = static_cast<int64_t>(hits.size());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, DataType::kInt64, {rank, nnz}));
    int64_t* y = out->mutable_data<int64_t>();
    for (int64_t j = 0; j < nnz; ++j) {
      int64_t rest = hits[j];
      for (int64_t d = rank - 1; d >= 0; --d) {
        y[d * nnz + j] = rest % shape[d];
        rest /= shape[d];
      }
    }
    return Status::Ok();
  }
};

// Compress: the slices along `axis` (of the flattened input when axis is absent) whose
// condition entry is true; a condition shorter than the axis leaves the rest out.
class CompressKernel : public OpKernel {
 public:
  explicit CompressKernel(const KernelInfo& info)
      : has_axis_(info.has_attribute("axis")), axis_(info.GetInt("axis", 0)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* cond, ctx.RequireTensor(1));
    if (cond->dtype() != DataType::kBool) return InvalidArgument("input 'condition' must be bool");
    if (cond->rank() != 1) return InvalidArgument("input 'condition' must be 1-D, got " + ShapeToString(cond->shape()));
    Shape in_shape = has_axis_ ? x->shape() : Shape{x->size()};
    int64_t axis = 0;
    if (has_axis_) {
      ONNXFLOW_ASSIGN_OR_RETURN(axis, NormalizeAxis(axis_, x->rank()));
    }
    const int64_t dim = in_shape[axis];
    const bool* c = cond->data<bool>();
    std::vector<int64_t> keep;
    for (int64_t i = 0; i < cond->size(); ++i) {
      if (!c[i]) continue;
      if (i >= dim) {
        return OutOfRange("input 'condition' selects index " + std::to_string(i) + " of an axis of size " +
                          std::to_string(dim));
      }
      keep.push_back(i);
    }
    Shape out_shape = in_shape;
    out_shape[axis] = static_cast<int64_t>(keep.size());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, x->dtype(), out_shape));
    if (out->size() == 0) return Status::Ok();
    const int64_t outer = SizeToDim(in_shape, axis);
    const int64_t inner = SizeFromDim(in_shape, axis + 1);
    return DispatchBySize(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = out->mutable_data<T>();
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i : keep) {
          std::copy_n(src + (o * dim + i) * inner, inner, dst);
          dst += inner;
        }
      }
      return Status::Ok();
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
};

// Unique: the distinct elements (or slices along `axis`), sorted or in order of first
// occurrence, with first-occurrence indices, inverse indices and counts.
class UniqueKernel : public OpKernel {
 public:
  explicit UniqueKernel(const KernelInfo& info)
      : has_axis_(info.has_attribute("axis")), axis_(info.GetInt("axis", 0)), sorted_(info.GetInt("sorted", 1) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    Shape in_shape = has_axis_ ? x->shape() : Shape{x->size()};
    int64_t axis = 0;
    if (has_axis_) {
      ONNXFLOW_ASSIGN_OR_RETURN(axis, NormalizeAxis(axis_, x->rank()));
    }
    const int64_t outer = SizeToDim(in_shape, axis);
    const int64_t n = in_shape[axis];
    const int64_t inner = SizeFromDim(in_shape, axis + 1);
    return DispatchType<ONNXFLOW_VALUE_TYPES>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      const T* v = x->data<T>();
      // Slice i is {v[(o * n + i) * inner + j]} in (o, j) order; compare slices lexicographically.
      auto compare = [&](int64_t a, int64_t b) -> int {
        for (int64_t o = 0; o < outer; ++o) {
          const T* pa = v + (o * n + a) * inner;
          const T* pb = v + (o * n + b) * inner;
          for (int64_t j = 0; j < inner; ++j) {
            if (ValueLess(pa[j], pb[j])) return -1;
            if (ValueLess(pb[j], pa[j])) return 1;
          }
        }
        return 0;
      };
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), int64_t{0});
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return compare(a, b) < 0; });
      // Groups of equal slices in sorted order; the first of each group is its first occurrence.
      std::vector<int64_t> first, counts, group_of(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        if (i == 0 || compare(order[i - 1], order[i]) != 0) {
          first.push_back(order[i]);
          counts.push_back(0);
        }
        group_of[order[i]] = static_cast<int64_t>(first.size()) - 1;
        ++counts.back();
      }
      const int64_t u = static_cast<int64_t>(first.size());
      // Output position of each group: sorted order, or order of first occurrence.
      std::vector<int64_t> position(static_cast<size_t>(u));
      std::iota(position.begin(), position.end(), int64_t{0});
      if (!sorted_) {
        std::vector<int64_t> by_first(static_cast<size_t>(u));
        std::iota(by_first.begin(), by_first.end(), int64_t{0});
        std::sort(by_first.begin(), by_first.end(), [&](int64_t a, int64_t b) { return first[a] < first[b]; });
        for (int64_t p = 0; p < u; ++p) position[by_first[p]] = p;
      }
      Shape y_shape = in_shape;
      y_shape[axis] = u;
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), y_shape));
      T* yd = y->mutable_data<T>();
      for (int64_t g = 0; g < u; ++g) {
        for (int64_t o = 0; o < outer; ++o) {
          std::copy_n(v + (o * n + first[g]) * inner, inner, yd + (o * u + position[g]) * inner);
        }
      }
      if (ctx.has_output(1)) {
        ONNXFLOW_ASSIGN_OR_RETURN(Tensor * indices, ctx.Allocate(1, DataType::kInt64, {u}));
        for (int64_t g = 0; g < u; ++g) indices->mutable_data<int64_t>()[position[g]] = first[g];
      }
      if (ctx.has_output(2)) {
        ONNXFLOW_ASSIGN_OR_RETURN(Tensor * inverse, ctx.Allocate(2, DataType::kInt64, {n}));
        for (int64_t i = 0; i < n; ++i) inverse->mutable_data<int64_t>()[i] = position[group_of[i]];
      }
      if (ctx.has_output(3)) {
        ONNXFLOW_ASSIGN_OR_RETURN(Tensor * count, ctx.Allocate(3, DataType::kInt64, {u}));
        for (int64_t g = 0; g < u; ++g) count->mutable_data<int64_t>()[position[g]] = counts[g];
      }
      return Status::Ok();
    });
  }

 private:
  bool has_axis_;
  int64_t axis_;
  bool sorted_;
};

#undef ONNXFLOW_VALUE_TYPES

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSelectKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "NonZero", 9, kOpenEnded, Make<NonZeroKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Compress", 9, kOpenEnded, Make<CompressKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Unique", 11, kOpenEnded, Make<UniqueKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
