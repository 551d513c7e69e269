// MaxUnpool (9, 11, 22): scatters X into a zero tensor at the flat indices I that MaxPool
// returned. The indices address the inferred shape, (in - 1) * stride + kernel - pad_begin -
// pad_end per spatial dim; a larger output_shape (optional third input) holds that result in its
// leading corner, zeros elsewhere.
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/shape.h"
#include "ops/nn/register.h"
#include "ops/nn/pool_geometry.h"

namespace onnxflow {
namespace {

class MaxUnpoolKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(PoolAttributes attrs, PoolAttributes::Parse(info));
    return std::unique_ptr<OpKernel>(new MaxUnpoolKernel(std::move(attrs)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* ind, ctx.RequireTensor(1));
    const size_t rank = attrs_.kernel.size();
    if (static_cast<size_t>(x->rank()) != rank + 2) {
      return InvalidArgument("input 'X' of shape " + ShapeToString(x->shape()) + " does not match a " +
                             std::to_string(rank) + "-D kernel");
    }
    if (ind->shape() != x->shape() || ind->dtype() != DataType::kInt64) {
      return InvalidArgument("input 'I' must be int64 with the shape of X " + ShapeToString(x->shape()));
    }
    Shape inferred = {x->dim(0), x->dim(1)};
    for (size_t i = 0; i < rank; ++i) {
      const int64_t s = attrs_.strides.empty() ? 1 : attrs_.strides[i];
      const int64_t pb = attrs_.pads.empty() ? 0 : attrs_.pads[i];
      const int64_t pe = attrs_.pads.empty() ? 0 : attrs_.pads[i + rank];
      inferred.push_back((x->dim(i + 2) - 1) * s + attrs_.kernel[i] - pb - pe);
    }
    Shape out_shape = inferred;
    if (const Tensor* os = ctx.input_tensor(2)) {
      if (os->dtype() != DataType::kInt64 || os->size() != x->rank()) {
        return InvalidArgument("input 'output_shape' must be int64 with " + std::to_string(x->rank()) + " values");
      }
      out_shape.assign(os->data<int64_t>(), os->data<int64_t>() + os->size());
      for (size_t i = 0; i < out_shape.size(); ++i) {
        if (out_shape[i] < inferred[i]) {
          return InvalidArgument("output_shape " + ShapeToString(out_shape) + " is smaller than the unpooled shape " +
                                 ShapeToString(inferred));
        }
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t total, CheckedElementCount(inferred));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x->dtype(), out_shape));
    const int64_t* idx = ind->data<int64_t>();
    // Flat index in `inferred` -> flat index in `out_shape`.
    const std::vector<int64_t> in_strides = Strides(inferred), out_strides = Strides(out_shape);
    auto place = [&](int64_t flat) {
      int64_t at = 0;
      for (size_t d = 0; d < inferred.size(); ++d) {
        at += (flat / in_strides[d]) * out_strides[d];
        flat %= in_strides[d];
      }
      return at;
    };
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x->data<T>();
      T* out = y->mutable_data<T>();
      for (int64_t i = 0; i < x->size(); ++i) {
        if (idx[i] < 0 || idx[i] >= total) {
          return OutOfRange("index " + std::to_string(idx[i]) + " in input 'I' is outside the unpooled shape " +
                            ShapeToString(inferred));
        }
        out[place(idx[i])] = in[i];
      }
      return Status::Ok();
    });
  }

 private:
  explicit MaxUnpoolKernel(PoolAttributes attrs) : attrs_(std::move(attrs)) {}
  PoolAttributes attrs_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMaxUnpool(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "MaxUnpool", 9, kOpenEnded, Make<MaxUnpoolKernel>());
}

}  // namespace onnxflow
