// com.onnxflow GatedActivation (gated_activation.h): rows of P [..., 2F] to rows of Y [..., F],
// y = act(p[:F]) * p[F:], rows split over the cores. float, float16 and bfloat16 (computed in float).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/math/gated_activation.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/math/gated_rows-inl.h"

#if HWY_ONCE

#include <string>

#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/math/float_view.h"
#include "ops/math/gated_activation.h"
#include "ops/math/register.h"

namespace onnxflow {

HWY_EXPORT(GatedRowsImpl);

void GatedRowsFloat(const GatedActivationSpec& spec, const float* gate, const float* up, float* y, int64_t n) {
  if (n <= 0) return;
  HWY_DYNAMIC_DISPATCH(GatedRowsImpl)(static_cast<int>(spec.op), spec.alpha, gate, up, y, n);
}

namespace {

// Per output element: the activation's polynomial or exp (about 20 vector operations) and the Mul.
constexpr int64_t kCostPerElement = 24;

class GatedActivationKernel : public OpKernel {
 public:
  explicit GatedActivationKernel(GatedActivationSpec spec) : spec_(spec) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(GatedActivationSpec spec, GatedActivationSpec::Parse(info));
    return std::unique_ptr<OpKernel>(new GatedActivationKernel(spec));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* p, ctx.RequireTensor(0));
    if (!IsFloatLike(p->dtype())) {
      return InvalidArgument(std::string("GatedActivation: input is ") + DataTypeName(p->dtype()) +
                             ", expected float, float16 or bfloat16");
    }
    if (p->rank() < 1 || p->dim(p->rank() - 1) % 2 != 0) {
      return InvalidArgument("GatedActivation: input " + ShapeToString(p->shape()) +
                             " must have an even last dimension (gate and up halves)");
    }
    Shape out_shape = p->shape();
    const int64_t f = out_shape.back() / 2;
    out_shape.back() = f;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, p->dtype(), out_shape));
    if (y->size() == 0) return Status::Ok();
    FloatIn in(*p);
    FloatOut out(y);
    const int64_t rows = y->size() / f;
    ParallelFor(ctx, rows, f * kCostPerElement, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const float* row = in.data + r * 2 * f;
        GatedRowsFloat(spec_, row, row + f, out.data + r * f, f);
      }
    });
    out.Finish();
    return Status::Ok();
  }

 private:
  GatedActivationSpec spec_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterGatedActivationKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kGatedActivation, internal_ops::kVersion, kOpenEnded,
                           Make<GatedActivationKernel>());
}

}  // namespace onnxflow
#endif  // HWY_ONCE
