// Multinomial (7, 22): for each row of x [batch, classes] (unnormalized log-probabilities), draws
// `sample_size` class indices with probability softmax(row). Output [batch, sample_size] of int32
// (default) or int64. Each draw is one uniform double u from the seeded stream (generator.h):
// the first class whose cumulative weight exceeds u * total. The spec names no algorithm, so
// seeded outputs are deterministic here but not comparable with other runtimes.
#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/random/generator.h"
#include "ops/random/register.h"

namespace onnxflow {
namespace random_ops {
namespace {

class MultinomialKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<MultinomialKernel>(new MultinomialKernel());
    k->seed_ = ReadSeed(info);
    k->sample_size_ = info.GetInt("sample_size", 1);
    if (k->sample_size_ < 0) return InvalidArgument("attribute sample_size must not be negative");
    const int64_t dtype = info.GetInt("dtype", static_cast<int64_t>(DataType::kInt32));
    if (dtype != static_cast<int64_t>(DataType::kInt32) && dtype != static_cast<int64_t>(DataType::kInt64)) {
      return InvalidArgument("attribute dtype " + std::to_string(dtype) + " must be int32 or int64");
    }
    k->dtype_ = static_cast<DataType>(dtype);
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() != 2) {
      return InvalidArgument("input must be 2-D [batch_size, class_size], got shape " + ShapeToString(x->shape()));
    }
    const int64_t batch = x->dim(0), classes = x->dim(1);
    if (classes == 0 && batch > 0 && sample_size_ > 0) return InvalidArgument("input has no classes to draw from");
    // The logits as double.
    std::vector<double> logits(static_cast<size_t>(x->size()));
    ONNXFLOW_RETURN_IF_ERROR(DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* xd = x->data<T>();
      for (size_t i = 0; i < logits.size(); ++i) logits[i] = static_cast<double>(ToCompute(xd[i]));
      return Status::Ok();
    }));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, dtype_, {batch, sample_size_}));
    NumpyRandom rng(RunSeed(seed_));
    std::vector<double> cumulative(static_cast<size_t>(classes));
    if (classes == 0) return Status::Ok();  // then sample_size is 0: nothing to draw
    for (int64_t b = 0; b < batch; ++b) {
      const double* row = logits.data() + b * classes;
      const double max = *std::max_element(row, row + classes);
      double total = 0;
      for (int64_t c = 0; c < classes; ++c) {
        total += std::isinf(max) ? (row[c] == max ? 1.0 : 0.0) : std::exp(row[c] - max);
        cumulative[c] = total;
      }
      if (!(total > 0) || std::isnan(total)) {
        return InvalidArgument("row " + std::to_string(b) + " of the input has no valid probabilities");
      }
      for (int64_t s = 0; s < sample_size_; ++s) {
        const double u = rng.NextDouble() * total;
        int64_t index = std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin();
        index = std::min(index, classes - 1);
        if (dtype_ == DataType::kInt32) y->mutable_data<int32_t>()[b * sample_size_ + s] = static_cast<int32_t>(index);
        else y->mutable_data<int64_t>()[b * sample_size_ + s] = index;
      }
    }
    return Status::Ok();
  }

 private:
  MultinomialKernel() = default;
  std::optional<uint32_t> seed_;
  int64_t sample_size_ = 1;
  DataType dtype_ = DataType::kInt32;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMultinomial(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Multinomial", 7, kOpenEnded, Make<MultinomialKernel>());
}

}  // namespace random_ops
}  // namespace onnxflow
