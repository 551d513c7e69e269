// Binarizer-1 (ai.onnx.ml): Y = X > threshold ? 1 : 0, element-wise (NaN gives 0). float32 runs
// the Highway loop in float_rows.
#include <string>
#include <type_traits>

#include "ops/framework/dispatch.h"
#include "ops/framework/parallel.h"
#include "ops/ml/float_rows.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

class Binarizer final : public OpKernel {
 public:
  explicit Binarizer(const KernelInfo& info) : threshold_(info.GetFloat("threshold", 0.0f)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    return DispatchType<float, double, int64_t, int32_t>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), x->shape()));
      const T* in = x->data<T>();
      T* out = y->mutable_data<T>();
      // The threshold is a float attribute; compare in double, which holds it and every
      // float/int32 exactly (int64 beyond 2^53 rounds, as it would in any float comparison).
      if constexpr (std::is_same_v<T, float>) {
        ParallelFor(ctx, x->size(), 1, [&](int64_t begin, int64_t end) {
          ml::BinarizeF32(in + begin, end - begin, threshold_, out + begin);
        });
        return Status::Ok();
      }
      const double threshold = threshold_;
      ParallelFor(ctx, x->size(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) out[i] = static_cast<double>(in[i]) > threshold ? T(1) : T(0);
      });
      return Status::Ok();
    });
  }

 private:
  float threshold_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBinarizer(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "Binarizer", 1, kOpenEnded, Make<Binarizer>());
}

}  // namespace onnxflow
