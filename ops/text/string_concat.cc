// StringConcat-20: Z = X + Y element-wise on UTF-8 strings, with numpy broadcasting.
// Concatenating bytes concatenates UTF-8 text, so no decoding is needed.
#include "ops/text/string_ops.h"

#include <string>

#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

class StringConcat final : public OpKernel {
 public:
  explicit StringConcat(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* y, ctx.RequireTensor(1));
    if (x->dtype() != DataType::kString || y->dtype() != DataType::kString) {
      return InvalidArgument(std::string("StringConcat needs string inputs, got ") + DataTypeName(x->dtype()) +
                             " and " + DataTypeName(y->dtype()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(x->shape(), y->shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * z, ctx.Allocate(0, DataType::kString, shape));
    const std::string* a = x->data<std::string>();
    const std::string* b = y->data<std::string>();
    std::string* out = z->mutable_data<std::string>();
    const int64_t n = z->size();
    if (x->shape() == shape && y->shape() == shape) {
      for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
      return Status::Ok();
    }
    BroadcastWalker walk(shape, {x->shape(), y->shape()});
    for (int64_t i = 0; i < n; ++i, walk.Next()) out[i] = a[walk.offset(0)] + b[walk.offset(1)];
    return Status::Ok();
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterStringConcat(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "StringConcat", 20, kOpenEnded, Make<StringConcat>());
}

}  // namespace onnxflow
