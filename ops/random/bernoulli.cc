// Bernoulli (15, 22): y[i] = 1 with probability x[i], else 0, in the type `dtype` (default: x's
// type). Draws follow numpy's binomial(1, p) on a RandomState(seed) stream (see generator.h);
// p = 0 and p = 1 always give 0 and 1. A probability outside [0, 1] is an error.
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/cast/convert.h"
#include "ops/framework/dispatch.h"
#include "ops/random/generator.h"
#include "ops/random/register.h"

namespace onnxflow {
namespace random_ops {
namespace {

class BernoulliKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<BernoulliKernel>(new BernoulliKernel());
    k->seed_ = ReadSeed(info);
    if (info.has_attribute("dtype")) {
      const int64_t dtype = info.GetInt("dtype", 0);
      if (dtype < 0 || dtype > kMaxDataType ||
          !IsOneOf<ONNXFLOW_NUMERIC_TYPES, bool>(static_cast<DataType>(dtype))) {
        return InvalidArgument("attribute dtype " + std::to_string(dtype) + " is not a numeric type");
      }
      k->dtype_ = static_cast<DataType>(dtype);
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const DataType dtype = dtype_ == DataType::kUndefined ? x->dtype() : dtype_;
    // The probabilities as double, checked before anything is drawn.
    std::vector<double> p(static_cast<size_t>(x->size()));
    ONNXFLOW_RETURN_IF_ERROR(DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* xd = x->data<T>();
      for (size_t i = 0; i < p.size(); ++i) {
        p[i] = static_cast<double>(ToCompute(xd[i]));
        if (!(p[i] >= 0.0 && p[i] <= 1.0)) {
          return InvalidArgument("input element " + std::to_string(i) + " = " + std::to_string(p[i]) +
                                 " is not a probability in [0, 1]");
        }
      }
      return Status::Ok();
    }));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, dtype, x->shape()));
    NumpyRandom rng(RunSeed(seed_));
    return DispatchType<ONNXFLOW_NUMERIC_TYPES, bool>(dtype, [&](auto tag) {
      using T = decltype(tag);
      T* out = y->mutable_data<T>();
      for (size_t i = 0; i < p.size(); ++i) out[i] = ConvertElement<T>(rng.NextBernoulli(p[i]));
      return Status::Ok();
    });
  }

 private:
  BernoulliKernel() = default;
  std::optional<uint32_t> seed_;
  DataType dtype_ = DataType::kUndefined;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBernoulli(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Bernoulli", 15, kOpenEnded, Make<BernoulliKernel>());
}

}  // namespace random_ops
}  // namespace onnxflow
