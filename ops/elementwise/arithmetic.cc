// Add, Sub, Mul, Div: numpy-broadcast binary arithmetic over every numeric type.
//
// float32 runs through the Highway array functions; float16/bfloat16 convert blocks to float and
// take the same path; double and the integer types use plain loops (integers wrap on overflow
// like numpy). Integer Div truncates toward zero; a zero divisor or INT_MIN / -1 is an error.
#include <atomic>
#include <limits>
#include <string>

#include "ops/elementwise/common.h"
#include "ops/elementwise/float_simd.h"
#include "ops/elementwise/same_type_binary.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

enum class Arith { kAdd, kSub, kMul, kDiv };

const char* ArithName(Arith op) {
  switch (op) {
    case Arith::kAdd:
      return "Add";
    case Arith::kSub:
      return "Sub";
    case Arith::kMul:
      return "Mul";
    case Arith::kDiv:
      return "Div";
  }
  return "?";
}

FloatBinaryOp ToFloatOp(Arith op) {
  switch (op) {
    case Arith::kAdd:
      return FloatBinaryOp::kAdd;
    case Arith::kSub:
      return FloatBinaryOp::kSub;
    case Arith::kMul:
      return FloatBinaryOp::kMul;
    case Arith::kDiv:
      return FloatBinaryOp::kDiv;
  }
  return FloatBinaryOp::kAdd;
}

template <typename T>
Status IntegerDivide(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor* y) {
  if (y->size() == 0) return Status::Ok();
  const T* pb = b.data<T>();
  for (int64_t i = 0; i < b.size(); ++i) {
    if (pb[i] == 0) return InvalidArgument("integer division by zero (input B, element " + std::to_string(i) + ")");
  }
  std::atomic<bool> overflow{false};
  const Status status = RunScalarBinary<T>(ctx, a, b, y, 4, [&](T p, T q) -> T {
    if constexpr (std::is_signed_v<T>) {
      if (q == -1) {
        if (p == std::numeric_limits<T>::min()) overflow.store(true, std::memory_order_relaxed);
        return WrapNeg(p);
      }
    }
    return static_cast<T>(p / q);
  });
  ONNXFLOW_RETURN_IF_ERROR(status);
  if (overflow.load()) return InvalidArgument("integer division overflows: the smallest value divided by -1");
  return Status::Ok();
}

template <typename T>
Status Arithmetic(const KernelContext& ctx, Arith op, const Tensor& a, const Tensor& b, Tensor* y) {
  if constexpr (kComputesInFloat<T>) {
    return RunFloatBinary<T>(ctx, ToFloatOp(op), a, b, y);
  } else {
    switch (op) {
      case Arith::kAdd:
        return RunScalarBinary<T>(ctx, a, b, y, 1, [](T p, T q) { return WrapAdd(p, q); });
      case Arith::kSub:
        return RunScalarBinary<T>(ctx, a, b, y, 1, [](T p, T q) { return WrapSub(p, q); });
      case Arith::kMul:
        return RunScalarBinary<T>(ctx, a, b, y, 1, [](T p, T q) { return WrapMul(p, q); });
      case Arith::kDiv:
        if constexpr (std::is_integral_v<T>) {
          return IntegerDivide<T>(ctx, a, b, y);
        } else {
          return RunScalarBinary<T>(ctx, a, b, y, 1, [](T p, T q) { return p / q; });
        }
    }
    return Internal("unknown arithmetic op");
  }
}

class ArithmeticKernel : public OpKernel {
 public:
  ArithmeticKernel(const KernelInfo& info, Arith op) : op_(op), legacy_(info) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b_in, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(SameTypeOrError(*a, *b_in, ArithName(op_)));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor b, legacy_.Apply(*a, *b_in));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape(), b.shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, a->dtype(), shape));
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(
        a->dtype(), [&](auto tag) { return Arithmetic<decltype(tag)>(ctx, op_, *a, b, y); });
  }

 private:
  Arith op_;
  LegacyBroadcast legacy_;
};

ONNXFLOW_REGISTRAR KernelFactory ArithmeticFactory(Arith op) {
  return WithInputTypes<ONNXFLOW_NUMERIC_TYPES>(0, Make<ArithmeticKernel>(op));
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterArithmeticKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Add", 1, kOpenEnded, ArithmeticFactory(Arith::kAdd)));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Sub", 1, kOpenEnded, ArithmeticFactory(Arith::kSub)));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Mul", 1, kOpenEnded, ArithmeticFactory(Arith::kMul)));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Div", 1, kOpenEnded, ArithmeticFactory(Arith::kDiv)));
  return Status::Ok();
}

}  // namespace onnxflow
