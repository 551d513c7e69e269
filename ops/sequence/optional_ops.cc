// Optional, OptionalHasElement, OptionalGetElement. An optional with a value is simply that value
// (a tensor or a sequence); one without is Value::kNone.
#include "ops/sequence/sequence_util.h"

namespace onnxflow {
namespace {

class Optional : public OpKernel {
 public:
  explicit Optional(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input(0);
    ctx.SetOutput(0, v != nullptr ? *v : Value());
    return Status::Ok();
  }
};

class OptionalHasElement : public OpKernel {
 public:
  explicit OptionalHasElement(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input(0);
    ctx.SetOutput(0, Value(Tensor::Scalar<bool>(v != nullptr && !v->is_none())));
    return Status::Ok();
  }
};

class OptionalGetElement : public OpKernel {
 public:
  explicit OptionalGetElement(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    const Value* v = ctx.input(0);
    if (v == nullptr || v->is_none()) return InvalidArgument("the optional input has no value");
    ctx.SetOutput(0, *v);
    return Status::Ok();
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterOptionalOps(KernelRegistry& r) {
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "Optional", 15, kOpenEnded, Make<Optional>()));
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "OptionalHasElement", 15, kOpenEnded, Make<OptionalHasElement>()));
  ONNXFLOW_RETURN_IF_ERROR(r.Register(kOnnxDomain, "OptionalGetElement", 15, kOpenEnded, Make<OptionalGetElement>()));
  return Status::Ok();
}

}  // namespace onnxflow
