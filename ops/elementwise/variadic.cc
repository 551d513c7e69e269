// Max, Min, Sum, Mean: one or more inputs, numpy-broadcast together (opset 8+; earlier versions
// required equal shapes, which broadcasting also accepts).
//
// The output is allocated once with the broadcast shape of all inputs and folded in place:
// y = op(x0, x1), then y = op(y, xk) for each further input. Max and Min propagate NaN.
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/elementwise/common.h"
#include "ops/elementwise/float_simd.h"
#include "ops/elementwise/same_type_binary.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

enum class Fold { kMax, kMin, kSum, kMean };

template <typename T>
T MaxOf(T p, T q) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(p)) return p;
    if (std::isnan(q)) return q;
  }
  return p < q ? q : p;
}
template <typename T>
T MinOf(T p, T q) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(p)) return p;
    if (std::isnan(q)) return q;
  }
  return q < p ? q : p;
}

FloatBinaryOp ToFloatOp(Fold op) {
  switch (op) {
    case Fold::kMax:
      return FloatBinaryOp::kMax;
    case Fold::kMin:
      return FloatBinaryOp::kMin;
    default:
      return FloatBinaryOp::kAdd;
  }
}

// y = op(a, b) for one fold step; y may be a (in place). Sum and Mean of 16-bit floats round to
// the 16-bit type after each step, as a chain of Adds would.
template <typename T>
Status FoldStep(const KernelContext& ctx, Fold op, const Tensor& a, const Tensor& b, Tensor* y) {
  if constexpr (kComputesInFloat<T>) {
    return RunFloatBinary<T>(ctx, ToFloatOp(op), a, b, y);
  } else {
    switch (op) {
      case Fold::kMax:
        return RunScalarBinary<T>(ctx, a, b, y, 1, [](T p, T q) { return MaxOf(p, q); });
      case Fold::kMin:
        return RunScalarBinary<T>(ctx, a, b, y, 1, [](T p, T q) { return MinOf(p, q); });
      default:
        return RunScalarBinary<T>(ctx, a, b, y, 1, [](T p, T q) { return WrapAdd(p, q); });
    }
  }
}

template <typename T>
void DivideInPlace(const KernelContext& ctx, Tensor* y, int64_t count) {
  RunUnary<T, T>(ctx, *y, y, 2, [count](const T* x, T* out, int64_t n) {
    for (int64_t i = 0; i < n; ++i) {
      out[i] = FromCompute<T>(static_cast<ComputeType<T>>(ToCompute(x[i]) / static_cast<ComputeType<T>>(count)));
    }
  });
}

class VariadicKernel : public OpKernel {
 public:
  VariadicKernel(Fold op, const char* name) : op_(op), name_(name) {}

  Status Compute(KernelContext& ctx) const override {
    std::vector<const Tensor*> inputs;
    std::vector<const Shape*> shapes;
    for (int i = 0; i < ctx.input_count(); ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* t, ctx.RequireTensor(i));
      if (!inputs.empty()) ONNXFLOW_RETURN_IF_ERROR(SameTypeOrError(*inputs[0], *t, name_));
      inputs.push_back(t);
      shapes.push_back(&t->shape());
    }
    if (inputs.empty()) return InvalidArgument(std::string(name_) + " needs at least one input");
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(shapes));
    const DataType dtype = inputs[0]->dtype();
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, dtype, shape));
    auto body = [&](auto tag) -> Status {
      using T = decltype(tag);
      if (inputs.size() == 1) {
        if (y->size() > 0) std::memcpy(y->mutable_raw_data(), inputs[0]->raw_data(), y->nbytes());
      } else {
        ONNXFLOW_RETURN_IF_ERROR(FoldStep<T>(ctx, op_, *inputs[0], *inputs[1], y));
        for (size_t k = 2; k < inputs.size(); ++k) ONNXFLOW_RETURN_IF_ERROR(FoldStep<T>(ctx, op_, *y, *inputs[k], y));
      }
      if (op_ == Fold::kMean && inputs.size() > 1) DivideInPlace<T>(ctx, y, static_cast<int64_t>(inputs.size()));
      return Status::Ok();
    };
    if (op_ == Fold::kMean) return DispatchType<ONNXFLOW_FLOAT_TYPES>(dtype, body);
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(dtype, body);
  }

 private:
  Fold op_;
  const char* name_;
};

ONNXFLOW_REGISTRAR KernelFactory VariadicFactory(Fold op, const char* name) {
  KernelFactory make = [op, name](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new VariadicKernel(op, name));
  };
  if (op == Fold::kMean) return WithInputTypes<ONNXFLOW_FLOAT_TYPES>(0, make);
  return WithInputTypes<ONNXFLOW_NUMERIC_TYPES>(0, make);
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterVariadicKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Max", 1, kOpenEnded, VariadicFactory(Fold::kMax, "Max")));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Min", 1, kOpenEnded, VariadicFactory(Fold::kMin, "Min")));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Sum", 1, kOpenEnded, VariadicFactory(Fold::kSum, "Sum")));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Mean", 1, kOpenEnded, VariadicFactory(Fold::kMean, "Mean")));
  return Status::Ok();
}

}  // namespace onnxflow
