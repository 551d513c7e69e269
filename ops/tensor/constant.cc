// Ops that make tensors from attributes or scalars: Constant, ConstantOfShape, EyeLike, Range.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/framework/tensor_proto.h"
#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

// Dense tensors made from attributes are bounded like initializers would be in practice; a
// sparse_value whose dims promise terabytes is refused at load.
constexpr int64_t kMaxConstantBytes = int64_t{1} << 32;

// SparseTensorProto -> dense: values [NNZ], indices either [NNZ] (linear) or [NNZ, rank].
Result<Tensor> DenseFromSparse(const onnx::SparseTensorProto& sparse) {
  Shape dims(sparse.dims().begin(), sparse.dims().end());
  ONNXFLOW_ASSIGN_OR_RETURN(const int64_t count, CheckedElementCount(dims));
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor values, TensorFromProto(sparse.values()));
  if (count > kMaxConstantBytes / static_cast<int64_t>(std::max<size_t>(ElementSize(values.dtype()), 1))) {
    return InvalidArgument("sparse_value of shape " + ShapeToString(dims) + " is too large");
  }
  const int64_t nnz = values.size();
  if (values.rank() != 1) return InvalidArgument("sparse_value values must be 1-D, got " + ShapeToString(values.shape()));
  std::vector<int64_t> linear(static_cast<size_t>(nnz));
  if (nnz > 0) {
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor indices, TensorFromProto(sparse.indices()));
    if (indices.dtype() != DataType::kInt64) return InvalidArgument("sparse_value indices must be int64");
    const int64_t* idx = indices.data<int64_t>();
    const int64_t rank = static_cast<int64_t>(dims.size());
    if (indices.shape() == Shape{nnz}) {
      for (int64_t i = 0; i < nnz; ++i) {
        if (idx[i] < 0 || idx[i] >= count) return IndexOutOfRange("sparse_value indices", idx[i], count);
        linear[i] = idx[i];
      }
    } else if (indices.shape() == Shape{nnz, rank}) {
      const std::vector<int64_t> strides = Strides(dims);
      for (int64_t i = 0; i < nnz; ++i) {
        int64_t at = 0;
        for (int64_t d = 0; d < rank; ++d) {
          const int64_t v = idx[i * rank + d];
          if (v < 0 || v >= dims[d]) return IndexOutOfRange("sparse_value indices", v, dims[d]);
          at += v * strides[d];
        }
        linear[i] = at;
      }
    } else {
      return InvalidArgument("sparse_value indices have shape " + ShapeToString(indices.shape()) + ", expected [" +
                             std::to_string(nnz) + "] or [" + std::to_string(nnz) + "," + std::to_string(rank) + "]");
    }
  }
  Tensor dense(values.dtype(), dims);
  ONNXFLOW_RETURN_IF_ERROR(DispatchBySize(values.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = values.data<T>();
    T* dst = dense.mutable_data<T>();
    for (int64_t i = 0; i < nnz; ++i) dst[linear[i]] = src[i];
    return Status::Ok();
  }));
  return dense;
}

// The value is built once at load; every run hands out the same (immutable) tensor.
class ConstantKernel : public OpKernel {
 public:
  explicit ConstantKernel(Tensor value) : value_(std::move(value)) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const auto& node = info.node();
    if (node.attribute_size() != 1) {
      return InvalidArgument("Constant needs exactly one of value, sparse_value, value_float(s), value_int(s), "
                             "value_string(s); got " + std::to_string(node.attribute_size()) + " attributes");
    }
    const onnx::AttributeProto& a = node.attribute(0);
    const std::string& name = a.name();
    Tensor t;
    if (name == "value") {
      ONNXFLOW_ASSIGN_OR_RETURN(t, info.GetTensor("value"));
    } else if (name == "sparse_value") {
      if (!a.has_sparse_tensor()) return InvalidArgument("attribute 'sparse_value' holds no sparse tensor");
      ONNXFLOW_ASSIGN_OR_RETURN(t, DenseFromSparse(a.sparse_tensor()));
    } else if (name == "value_float") {
      t = Tensor::Scalar<float>(a.f());
    } else if (name == "value_floats") {
      t = Tensor::FromVector<float>({a.floats_size()}, std::vector<float>(a.floats().begin(), a.floats().end()));
    } else if (name == "value_int") {
      t = Tensor::Scalar<int64_t>(a.i());
    } else if (name == "value_ints") {
      t = Tensor::FromVector<int64_t>({a.ints_size()}, std::vector<int64_t>(a.ints().begin(), a.ints().end()));
    } else if (name == "value_string") {
      t = Tensor::Scalar<std::string>(a.s());
    } else if (name == "value_strings") {
      t = Tensor::FromVector<std::string>({a.strings_size()},
                                          std::vector<std::string>(a.strings().begin(), a.strings().end()));
    } else {
      return InvalidArgument("Constant has unknown attribute '" + name + "'");
    }
    return std::unique_ptr<OpKernel>(new ConstantKernel(std::move(t)));
  }

  Status Compute(KernelContext& ctx) const override {
    ctx.SetOutput(0, Value(value_));
    return Status::Ok();
  }

 private:
  Tensor value_;
};

// Fills a tensor of the shape given by input 0 with the one-element `value` attribute
// (float32 0 by default).
class ConstantOfShapeKernel : public OpKernel {
 public:
  explicit ConstantOfShapeKernel(Tensor value) : value_(std::move(value)) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    Tensor value = Tensor::Scalar<float>(0.0f);
    if (info.has_attribute("value")) {
      ONNXFLOW_ASSIGN_OR_RETURN(value, info.GetTensor("value"));
      if (value.size() != 1) {
        return InvalidArgument("attribute 'value' must hold one element, got shape " + ShapeToString(value.shape()));
      }
    }
    return std::unique_ptr<OpKernel>(new ConstantOfShapeKernel(std::move(value)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* shape_tensor, ctx.RequireTensor(0));
    if (shape_tensor->dtype() != DataType::kInt64) return InvalidArgument("input 'input' (the shape) must be int64");
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, ReadInt64s(*shape_tensor, "input 'input' (the shape)"));
    for (int64_t d : shape) {
      if (d < 0) return InvalidArgument("input 'input' (the shape) has a negative dim " + std::to_string(d));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, value_.dtype(), shape));
    if (value_is_zero_) return Status::Ok();  // Allocate already zero-filled it
    return DispatchBySize(value_.dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T v = value_.data<T>()[0];
      T* y = out->mutable_data<T>();
      ParallelFor(ctx, out->size(), 1, [&](int64_t b, int64_t e) { std::fill(y + b, y + e, v); });
      return Status::Ok();
    });
  }

 private:
  static bool IsZero(const Tensor& t) {
    if (t.dtype() == DataType::kString) return t.data<std::string>()[0].empty();
    const auto* bytes = static_cast<const unsigned char*>(t.raw_data());
    return std::all_of(bytes, bytes + ElementSize(t.dtype()), [](unsigned char c) { return c == 0; });
  }

  Tensor value_;
  bool value_is_zero_ = IsZero(value_);
};

// A 2-D tensor shaped like the input with ones on the k-th diagonal.
class EyeLikeKernel : public OpKernel {
 public:
  explicit EyeLikeKernel(const KernelInfo& info)
      : k_(info.GetInt("k", 0)),
        dtype_(info.has_attribute("dtype") ? static_cast<DataType>(info.GetInt("dtype", 1)) : DataType::kUndefined) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() != 2) return InvalidArgument("input must be 2-D, got " + ShapeToString(x->shape()));
    const DataType dtype = dtype_ == DataType::kUndefined ? x->dtype() : dtype_;
    const int64_t rows = x->dim(0), cols = x->dim(1);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, dtype, x->shape()));
    return DispatchType<ONNXFLOW_NUMERIC_TYPES, bool>(dtype, [&](auto tag) {
      using T = decltype(tag);
      T* y = out->mutable_data<T>();
      const T one = FromCompute<T>(ComputeType<T>(1));
      const int64_t k = std::clamp<int64_t>(k_, -rows - 1, cols + 1);  // no overflow in i + k
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + k;
        if (j >= 0 && j < cols) y[i * cols + j] = one;
      }
      return Status::Ok();
    });
  }

 private:
  int64_t k_;
  DataType dtype_;
};

// Range: max(ceil((limit - start) / delta), 0) values start + i * delta. float16/bfloat16 are
// computed in float (stash_type 1, the default) or double (stash_type 11).
class RangeKernel : public OpKernel {
 public:
  explicit RangeKernel(const KernelInfo& info) : stash_double_(info.GetInt("stash_type", 1) == 11) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* start_t, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* limit_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* delta_t, ctx.RequireTensor(2));
    const DataType dtype = start_t->dtype();
    if (limit_t->dtype() != dtype || delta_t->dtype() != dtype) {
      return InvalidArgument("start, limit and delta must have the same type");
    }
    for (const Tensor* t : {start_t, limit_t, delta_t}) {
      if (t->size() != 1) return InvalidArgument("start, limit and delta must be scalars, got " + ShapeToString(t->shape()));
    }
    return DispatchType<float, double, int16_t, int32_t, int64_t, Float16, BFloat16>(dtype, [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeType<T>;
      const C start = ToCompute(start_t->data<T>()[0]);
      const C limit = ToCompute(limit_t->data<T>()[0]);
      const C delta = ToCompute(delta_t->data<T>()[0]);
      if (delta == C(0)) return InvalidArgument("input 'delta' is zero");
      int64_t n = 0;
      if constexpr (std::is_integral_v<C>) {
        // Exact integer ceil-division, without overflow in limit - start.
        const long double span = static_cast<long double>(limit) - static_cast<long double>(start);
        const long double steps = std::ceil(span / static_cast<long double>(delta));
        if (steps > 0) {
          if (steps > static_cast<long double>(INT64_MAX / 2)) return InvalidArgument("Range has too many elements");
          n = static_cast<int64_t>(steps);
        }
      } else {
        const double steps = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / static_cast<double>(delta));
        if (std::isnan(steps)) return InvalidArgument("Range bounds are NaN");
        if (steps > 0) {
          if (steps > static_cast<double>(INT64_MAX / 2)) return InvalidArgument("Range has too many elements");
          n = static_cast<int64_t>(steps);
        }
      }
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, dtype, {n}));
      T* y = out->mutable_data<T>();
      for (int64_t i = 0; i < n; ++i) {
        if constexpr (std::is_same_v<C, float> && !std::is_same_v<T, float>) {
          y[i] = stash_double_ ? FromCompute<T>(static_cast<float>(static_cast<double>(start) + i * static_cast<double>(delta)))
                               : FromCompute<T>(start + static_cast<float>(i) * delta);
        } else {
          y[i] = static_cast<T>(start + static_cast<C>(i) * delta);
        }
      }
      return Status::Ok();
    });
  }

 private:
  bool stash_double_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterConstantKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Constant", 1, kOpenEnded, Make<ConstantKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "ConstantOfShape", 9, kOpenEnded, Make<ConstantOfShapeKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "EyeLike", 9, kOpenEnded, Make<EyeLikeKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Range", 11, kOpenEnded, Make<RangeKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
