// Mod (opset 10+): the remainder of A / B with numpy broadcasting.
//   fmod = 0 (integers): the sign of the divisor, like Python's % (-7 mod 3 = 2).
//   fmod = 1, and every floating type: the sign of the dividend, like C fmod (-7 fmod 3 = -1).
// An integer zero divisor is an error.
#include <cmath>
#include <string>

#include "ops/elementwise/common.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

template <typename T>
T IntegerMod(T a, T b, bool fmod) {
  if constexpr (std::is_signed_v<T>) {
    if (b == -1) return 0;  // avoids INT_MIN % -1, which traps
    T r = static_cast<T>(a % b);
    if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<T>(r + b);
    return r;
  } else {
    return static_cast<T>(a % b);
  }
}

template <typename T>
Status ModTyped(const KernelContext& ctx, const Tensor& a, const Tensor& b, Tensor* y, bool fmod) {
  if constexpr (std::is_integral_v<T>) {
    if (y->size() > 0) {
      const T* pb = b.data<T>();
      for (int64_t i = 0; i < b.size(); ++i) {
        if (pb[i] == 0)
          return InvalidArgument("Mod: integer division by zero (input B, element " + std::to_string(i) + ")");
      }
    }
    return RunBinary<T, T, T>(ctx, a, b, y, 4, [fmod](const T* x, bool xb, const T* z, bool zb, T* out, int64_t n) {
      BinarySpan(x, xb, z, zb, out, n, [fmod](T p, T q) { return IntegerMod(p, q, fmod); });
    });
  } else {
    return RunBinary<T, T, T>(ctx, a, b, y, 8, [](const T* x, bool xb, const T* z, bool zb, T* out, int64_t n) {
      BinarySpan(x, xb, z, zb, out, n, [](T p, T q) { return FromCompute<T>(std::fmod(ToCompute(p), ToCompute(q))); });
    });
  }
}

class ModKernel : public OpKernel {
 public:
  explicit ModKernel(const KernelInfo& info) : fmod_(info.GetInt("fmod", 0) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
    ONNXFLOW_RETURN_IF_ERROR(SameTypeOrError(*a, *b, "Mod"));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(a->shape(), b->shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, a->dtype(), shape));
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(
        a->dtype(), [&](auto tag) { return ModTyped<decltype(tag)>(ctx, *a, *b, y, fmod_); });
  }

 private:
  bool fmod_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterModKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Mod", 10, kOpenEnded,
                           WithInputTypes<ONNXFLOW_NUMERIC_TYPES>(0, Make<ModKernel>()));
}

}  // namespace onnxflow
