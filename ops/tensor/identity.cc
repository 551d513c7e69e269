// Identity, Shape, Size: ops that pass a value through or describe its shape.
#include <algorithm>
#include <string>

#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

// Passes tensors, sequences and optionals through unchanged; the output shares the input.
class IdentityKernel : public OpKernel {
 public:
  explicit IdentityKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    const Value* in = ctx.input(0);
    if (in == nullptr) return InvalidArgument("input 0 is required but absent");
    ctx.SetOutput(0, *in);
    return Status::Ok();
  }
};

// Shape-15 adds start/end: the slice [start, end) of the dims, clamped to [0, rank].
class ShapeKernel : public OpKernel {
 public:
  explicit ShapeKernel(const KernelInfo& info)
      : start_(info.GetInt("start", 0)), end_(info.has_attribute("end") ? info.GetInt("end", 0) : INT64_MAX) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    const int64_t rank = data->rank();
    auto clamp = [rank](int64_t v) {
      if (v < 0) v += rank;
      return std::clamp<int64_t>(v, 0, rank);
    };
    const int64_t start = clamp(start_);
    const int64_t end = end_ == INT64_MAX ? rank : clamp(end_);
    const int64_t n = std::max<int64_t>(end - start, 0);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, DataType::kInt64, {n}));
    std::copy_n(data->shape().begin() + start, n, out->mutable_data<int64_t>());
    return Status::Ok();
  }

 private:
  int64_t start_;
  int64_t end_;
};

class SizeKernel : public OpKernel {
 public:
  explicit SizeKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, DataType::kInt64, {}));
    out->mutable_data<int64_t>()[0] = data->size();
    return Status::Ok();
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterIdentityKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Identity", 1, kOpenEnded, Make<IdentityKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Shape", 1, kOpenEnded, Make<ShapeKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Size", 1, kOpenEnded, Make<SizeKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
