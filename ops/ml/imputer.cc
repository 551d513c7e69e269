// Imputer-1 (ai.onnx.ml): replaces elements equal to replaced_value_* (NaN matches NaN) with the
// imputed value of their feature (last axis), keeping X's type. Float inputs use the *_float(s)
// attributes, integer inputs the *_int64(s) ones.
#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/parallel.h"
#include "ops/ml/register.h"

namespace onnxflow {
namespace {

class Imputer final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::unique_ptr<Imputer> k(new Imputer());
    k->floats_ = info.GetFloats("imputed_value_floats");
    k->ints_ = info.GetInts("imputed_value_int64s");
    if (k->floats_.empty() == k->ints_.empty()) {
      return InvalidArgument("exactly one of imputed_value_floats and imputed_value_int64s must be set (non-empty)");
    }
    k->replaced_float_ = info.GetFloat("replaced_value_float", 0.0f);
    k->replaced_int_ = info.GetInt("replaced_value_int64", 0);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const int64_t features = x->rank() == 0 ? 1 : x->dim(x->rank() - 1);
    return DispatchType<float, double, int64_t, int32_t>(x->dtype(), [&](auto tag) -> Status {
      using T = decltype(tag);
      constexpr bool kFloat = std::is_floating_point_v<T>;
      const int64_t k = static_cast<int64_t>(kFloat ? floats_.size() : ints_.size());
      if (k == 0) {
        return InvalidArgument(std::string("X is ") + DataTypeName(x->dtype()) + " but only imputed_value_" +
                               (kFloat ? "int64s" : "floats") + " is set");
      }
      if (k != 1 && k != features) {
        return InvalidArgument("imputed values have " + std::to_string(k) + " entries but X has " +
                               std::to_string(features) + " features");
      }
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), x->shape()));
      const T* in = x->data<T>();
      T* out = y->mutable_data<T>();
      ParallelFor(ctx, x->size(), 2, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          const int64_t f = k == 1 ? 0 : i % features;
          bool replace;
          if constexpr (kFloat) {
            replace = std::isnan(replaced_float_) ? std::isnan(in[i]) : in[i] == static_cast<T>(replaced_float_);
            out[i] = replace ? static_cast<T>(floats_[f]) : in[i];
          } else {
            replace = static_cast<int64_t>(in[i]) == replaced_int_;
            out[i] = replace ? static_cast<T>(ints_[f]) : in[i];
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  Imputer() = default;
  std::vector<float> floats_;
  std::vector<int64_t> ints_;
  float replaced_float_ = 0;
  int64_t replaced_int_ = 0;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterImputer(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "Imputer", 1, kOpenEnded, Make<Imputer>());
}

}  // namespace onnxflow
