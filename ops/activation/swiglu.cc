// SwiGLU (opset 28): Y = A * sigmoid(alpha * A) * B, A (the gate) and B (the value) of identical
// shapes, no broadcasting. Float types.
#include <string>

#include "ops/activation/activation_simd.h"
#include "ops/activation/register.h"
#include "ops/elementwise/broadcast.h"
#include "ops/elementwise/common.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

class SwiGluKernel : public OpKernel {
 public:
  explicit SwiGluKernel(const KernelInfo& info) : alpha_(info.GetFloat("alpha", 1.0f)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
    if (a->dtype() != b->dtype()) {
      return InvalidArgument(std::string("SwiGLU: A has type ") + DataTypeName(a->dtype()) + ", B has " +
                             DataTypeName(b->dtype()));
    }
    if (a->shape() != b->shape()) {
      return InvalidArgument("SwiGLU: A of shape " + ShapeToString(a->shape()) + " and B of shape " +
                             ShapeToString(b->shape()) + " must have the same shape");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, a->dtype(), a->shape()));
    const float alpha = alpha_;
    return DispatchType<ONNXFLOW_FLOAT_TYPES>(a->dtype(), [&](auto tag) {
      using T = decltype(tag);
      if constexpr (std::is_same_v<T, float>) {
        return RunBinary<float, float, float>(
            ctx, *a, *b, y, 20, [alpha](const float* p, bool, const float* q, bool, float* out, int64_t n) {
              SwiGluFloat(alpha, p, q, out, n);
            });
      } else {
        using C = ComputeType<T>;
        return RunBinary<T, T, T>(
            ctx, *a, *b, y, 24, [alpha](const T* p, bool pb, const T* q, bool qb, T* out, int64_t n) {
              BinarySpan(p, pb, q, qb, out, n, [alpha](T g, T v) {
                const C gate = ToCompute(g);
                return FromCompute<T>(gate * activation::Sigmoid(static_cast<C>(alpha) * gate) * ToCompute(v));
              });
            });
      }
    });
  }

 private:
  float alpha_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSwiGluKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "SwiGLU", 28, kOpenEnded,
                           WithInputTypes<ONNXFLOW_FLOAT_TYPES>(0, Make<SwiGluKernel>()));
}

}  // namespace onnxflow
