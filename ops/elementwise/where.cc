// Where(condition, X, Y): X where condition is true, else Y; all three numpy-broadcast together.
// X and Y may be any type, strings included.
#include "ops/elementwise/common.h"
#include "ops/framework/dispatch.h"

namespace onnxflow {
namespace {

class WhereKernel : public OpKernel {
 public:
  explicit WhereKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* cond, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* y, ctx.RequireTensor(2));
    if (cond->dtype() != DataType::kBool) {
      return InvalidArgument(std::string("Where: condition must be bool, not ") + DataTypeName(cond->dtype()));
    }
    ONNXFLOW_RETURN_IF_ERROR(SameTypeOrError(*x, *y, "Where"));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes({&cond->shape(), &x->shape(), &y->shape()}));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, x->dtype(), shape));
    return DispatchType<ONNXFLOW_ALL_TYPES>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      return RunTernary<bool, T, T, T>(ctx, *cond, *x, *y, out, 1,
                                       [](bool c, const T& p, const T& q) -> const T& { return c ? p : q; });
    });
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterWhereKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Where", 9, kOpenEnded,
                           WithInputTypes<bool>(0, WithInputTypes<ONNXFLOW_ALL_TYPES>(1, Make<WhereKernel>())));
}

}  // namespace onnxflow
