// ArrayFeatureExtractor-1 (ai.onnx.ml): Z[..., j] = X[..., Y[j]], with Y flattened. A 1-D X
// gives a [1, len(Y)] output (as onnxruntime and the ONNX reference do).
#include <string>

#include "ops/framework/dispatch.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

class ArrayFeatureExtractor final : public OpKernel {
 public:
  explicit ArrayFeatureExtractor(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* y, ctx.RequireTensor(1));
    if (y->dtype() != DataType::kInt64) {
      return InvalidArgument(std::string("indices Y must be int64, got ") + DataTypeName(y->dtype()));
    }
    if (x->rank() < 1) return InvalidArgument("X must have rank >= 1, got a scalar");
    const int64_t last = x->dim(x->rank() - 1);
    const int64_t k = y->size();
    const int64_t* index = y->data<int64_t>();
    for (int64_t j = 0; j < k; ++j) {
      if (index[j] < 0 || index[j] >= last) {
        return OutOfRange("index Y[" + std::to_string(j) + "] = " + std::to_string(index[j]) +
                          " is outside [0, " + std::to_string(last) + ") for X of shape " + ShapeToString(x->shape()));
      }
    }
    Shape shape = x->shape();
    if (shape.size() == 1) shape.insert(shape.begin(), 1);
    shape.back() = k;
    const int64_t rows = x->size() / (last == 0 ? 1 : last);
    return DispatchType<float, double, int64_t, int32_t, std::string>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * z, ctx.Allocate(0, x->dtype(), shape));
      if (last == 0) return Status::Ok();  // k is 0 too: nothing to copy
      const T* in = x->data<T>();
      T* out = z->mutable_data<T>();
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < k; ++j) out[r * k + j] = in[r * last + index[j]];
      }
      return Status::Ok();
    });
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterArrayFeatureExtractor(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "ArrayFeatureExtractor", 1, kOpenEnded, Make<ArrayFeatureExtractor>());
}

}  // namespace onnxflow
