// Clip: y = min(max(x, min), max), numpy's order (min > max gives max everywhere).
//   opset 1-10: min and max are float attributes (float types only).
//   opset 11+:  min and max are optional one-element inputs of x's type; opset 12+ adds integers.
// A missing bound does not clip on that side. NaN stays NaN.
#include <limits>
#include <string>

#include "ops/activation/activation_simd.h"
#include "ops/activation/register.h"
#include "ops/elementwise/broadcast.h"
#include "ops/elementwise/common.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

class ClipKernel : public OpKernel {
 public:
  explicit ClipKernel(const KernelInfo& info)
      : bounds_are_inputs_(info.opset() >= 11),
        attr_min_(info.GetFloat("min", std::numeric_limits<float>::lowest())),
        attr_max_(info.GetFloat("max", std::numeric_limits<float>::max())) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      using C = ComputeType<T>;
      C lo = std::numeric_limits<C>::lowest();
      C hi = std::numeric_limits<C>::max();
      if (bounds_are_inputs_) {
        ONNXFLOW_RETURN_IF_ERROR(ReadBound<T>(ctx, 1, "min", &lo));
        ONNXFLOW_RETURN_IF_ERROR(ReadBound<T>(ctx, 2, "max", &hi));
      } else {
        if constexpr (!std::is_floating_point_v<C>) {
          return InvalidArgument("Clip before opset 11 takes float types only");
        } else {
          lo = static_cast<C>(attr_min_);
          hi = static_cast<C>(attr_max_);
        }
      }
      if constexpr (std::is_same_v<T, float>) {
        ActParams p;
        p.alpha = lo;
        p.beta = hi;
        RunUnary<float, float>(ctx, *x, y, 2, [&](const float* in, float* out, int64_t n) {
          ActivationFloat(ActOp::kClip, p, in, out, n);
        });
      } else {
        RunUnary<T, T>(ctx, *x, y, 2, [lo, hi](const T* in, T* out, int64_t n) {
          for (int64_t i = 0; i < n; ++i) out[i] = FromCompute<T>(activation::Clip(ToCompute(in[i]), lo, hi));
        });
      }
      return Status::Ok();
    });
  }

 private:
  template <typename T>
  static Status ReadBound(const KernelContext& ctx, int index, const char* name, ComputeType<T>* bound) {
    const Tensor* t = ctx.input_tensor(index);
    if (t == nullptr) return Status::Ok();
    if (t->dtype() != DataTypeOf<T>::value) {
      return InvalidArgument(std::string("Clip: ") + name + " has type " + DataTypeName(t->dtype()) +
                             ", the input has " + DataTypeName(DataTypeOf<T>::value));
    }
    if (t->size() != 1) {
      return InvalidArgument(std::string("Clip: ") + name + " must hold one value, not shape " +
                             ShapeToString(t->shape()));
    }
    *bound = ToCompute(t->data<T>()[0]);
    return Status::Ok();
  }

  bool bounds_are_inputs_;
  float attr_min_;
  float attr_max_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterClipKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Clip", 1, kOpenEnded,
                           WithInputTypes<ONNXFLOW_NUMERIC_TYPES>(0, Make<ClipKernel>()));
}

}  // namespace onnxflow
