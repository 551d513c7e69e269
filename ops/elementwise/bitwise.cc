// BitShift (unsigned types, direction LEFT/RIGHT; shifting by the bit width or more gives 0),
// BitwiseAnd, BitwiseOr, BitwiseXor (numpy-broadcast) and BitwiseNot over the integer types.
#include <string>

#include "ops/elementwise/common.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

enum class Bits { kAnd, kOr, kXor, kShiftLeft, kShiftRight };

template <typename T>
T ShiftLeft(T v, T s) {
  return s >= sizeof(T) * 8 ? T{0} : static_cast<T>(static_cast<WrapType<T>>(v) << s);
}
template <typename T>
T ShiftRight(T v, T s) {
  return s >= sizeof(T) * 8 ? T{0} : static_cast<T>(v >> s);
}

template <typename T>
Status BitsTyped(const KernelContext& ctx, Bits op, const Tensor& a, const Tensor& b, Tensor* y) {
  auto run = [&](auto fn) {
    return RunBinary<T, T, T>(ctx, a, b, y, 1, [&](const T* x, bool xb, const T* z, bool zb, T* out, int64_t n) {
      BinarySpan(x, xb, z, zb, out, n, fn);
    });
  };
  switch (op) {
    case Bits::kAnd:
      return run([](T p, T q) { return static_cast<T>(p & q); });
    case Bits::kOr:
      return run([](T p, T q) { return static_cast<T>(p | q); });
    case Bits::kXor:
      return run([](T p, T q) { return static_cast<T>(p ^ q); });
    case Bits::kShiftLeft:
      if constexpr (std::is_unsigned_v<T>) return run([](T p, T q) { return ShiftLeft(p, q); });
      break;
    case Bits::kShiftRight:
      if constexpr (std::is_unsigned_v<T>) return run([](T p, T q) { return ShiftRight(p, q); });
      break;
  }
  return InvalidArgument(std::string("BitShift takes unsigned integers, not ") + DataTypeName(a.dtype()));
}

class BitsKernel : public OpKernel {
 public:
  BitsKernel(Bits op, const char* name) : op_(op), name_(name) {}

  static Result<std::unique_ptr<OpKernel>> CreateShift(const KernelInfo& info) {
    const std::string direction = info.GetString("direction", "");
    if (direction == "LEFT") return std::unique_ptr<OpKernel>(new BitsKernel(Bits::kShiftLeft, "BitShift"));
    if (direction == "RIGHT") return std::unique_ptr<OpKernel>(new BitsKernel(Bits::kShiftRight, "BitShift"));
    return InvalidArgument("BitShift: attribute direction must be LEFT or RIGHT, not '" + direction + "'");
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(SameTypeOrError(*a, *b, name_));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape(), b->shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, a->dtype(), shape));
    return DispatchType<ONNXFLOW_INT_TYPES>(a->dtype(),
                                            [&](auto tag) { return BitsTyped<decltype(tag)>(ctx, op_, *a, *b, y); });
  }

 private:
  Bits op_;
  const char* name_;
};

class BitwiseNotKernel : public OpKernel {
 public:
  explicit BitwiseNotKernel(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), x->shape()));
    return DispatchType<ONNXFLOW_INT_TYPES>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      RunUnary<T, T>(ctx, *x, y, 1, [](const T* in, T* out, int64_t n) {
        for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(~in[i]);
      });
      return Status::Ok();
    });
  }
};

ONNXFLOW_REGISTRAR KernelFactory BitsFactory(Bits op, const char* name) {
  return WithInputTypes<ONNXFLOW_INT_TYPES>(0, [op, name](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> {
    return std::unique_ptr<OpKernel>(new BitsKernel(op, name));
  });
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBitwiseKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      (registry.Register(kOnnxDomain, "BitShift", 11, kOpenEnded,
                         WithInputTypes<uint8_t, uint16_t, uint32_t, uint64_t>(0, &BitsKernel::CreateShift))));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "BitwiseAnd", 18, kOpenEnded, BitsFactory(Bits::kAnd, "BitwiseAnd")));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "BitwiseOr", 18, kOpenEnded, BitsFactory(Bits::kOr, "BitwiseOr")));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "BitwiseXor", 18, kOpenEnded, BitsFactory(Bits::kXor, "BitwiseXor")));
  ONNXFLOW_RETURN_IF_ERROR((registry.Register(kOnnxDomain, "BitwiseNot", 18, kOpenEnded,
                                              WithInputTypes<ONNXFLOW_INT_TYPES>(0, Make<BitwiseNotKernel>()))));
  return Status::Ok();
}

}  // namespace onnxflow
