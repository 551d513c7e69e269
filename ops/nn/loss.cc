// NegativeLogLikelihoodLoss (12, 13, 22) and SoftmaxCrossEntropyLoss (12, 13).
//
// Input [N, C] or [N, C, d1, ...], target [N] or [N, d1, ...] of class indices (int32/int64),
// optional weight [C]. Each element's loss is -input[n, target, d...] * weight[target]; a target
// equal to ignore_index contributes 0 and no weight. reduction "none" returns the per-element
// losses, "sum" their sum, "mean" (the default) the sum divided by the sum of the weights used.
// SoftmaxCrossEntropyLoss first takes log_softmax over dim 1 (its optional second output) and then
// applies the same rule. Arithmetic is in double; results take the input's type. A target outside
// [0, C) that is not ignore_index is an OutOfRange error.
#include "ops/nn/register.h"

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

enum class Reduction { kNone, kSum, kMean };

Result<Reduction> ParseReduction(const KernelInfo& info) {
  const std::string r = info.GetString("reduction", "mean");
  if (r == "none") return Reduction::kNone;
  if (r == "sum") return Reduction::kSum;
  if (r == "mean") return Reduction::kMean;
  return InvalidArgument("unknown reduction '" + r + "'");
}

Result<std::vector<int64_t>> ReadTargets(const Tensor& t) {
  std::vector<int64_t> out(t.size());
  if (t.dtype() == DataType::kInt64) {
    for (int64_t i = 0; i < t.size(); ++i) out[i] = t.data<int64_t>()[i];
  } else if (t.dtype() == DataType::kInt32) {
    for (int64_t i = 0; i < t.size(); ++i) out[i] = t.data<int32_t>()[i];
  } else {
    return InvalidArgument(std::string("input 'target' must be int32 or int64, got ") + DataTypeName(t.dtype()));
  }
  return out;
}

class LossKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, bool softmax) {
    ONNXFLOW_ASSIGN_OR_RETURN(Reduction reduction, ParseReduction(info));
    auto* k = new LossKernel;
    k->softmax_ = softmax;
    k->reduction_ = reduction;
    k->has_ignore_index_ = info.has_attribute("ignore_index");
    k->ignore_index_ = info.GetInt("ignore_index", 0);
    return std::unique_ptr<OpKernel>(k);
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* target_t, ctx.RequireTensor(1));
    const Tensor* weight_t = ctx.input_tensor(2);
    if (x->rank() < 2) return InvalidArgument("input must be [N, C, ...], got " + ShapeToString(x->shape()));
    const int64_t n = x->dim(0), c = x->dim(1), d = SizeFromDim(x->shape(), 2);
    Shape expected_target = {n};
    expected_target.insert(expected_target.end(), x->shape().begin() + 2, x->shape().end());
    if (target_t->shape() != expected_target) {
      return InvalidArgument("target shape " + ShapeToString(target_t->shape()) + " does not match input shape " +
                             ShapeToString(x->shape()) + " (expected " + ShapeToString(expected_target) + ")");
    }
    if (weight_t != nullptr && weight_t->size() != c) {
      return InvalidArgument("weight must have C = " + std::to_string(c) + " values, got " +
                             ShapeToString(weight_t->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> target, ReadTargets(*target_t));
    for (int64_t t : target) {
      if ((t < 0 || t >= c) && !(has_ignore_index_ && t == ignore_index_)) {
        return OutOfRange("target value " + std::to_string(t) + " is outside [0, " + std::to_string(c) + ")");
      }
    }
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      std::vector<double> weight;
      if (weight_t != nullptr) {
        if (weight_t->dtype() != x->dtype()) return InvalidArgument("weight must have the input's type");
        const T* w = weight_t->data<T>();
        for (int64_t i = 0; i < c; ++i) weight.push_back(ToCompute(w[i]));
      }
      // Log-probabilities in double, [N, C, D].
      std::vector<double> logp(x->size());
      const T* in = x->data<T>();
      for (int64_t i = 0; i < x->size(); ++i) logp[i] = ToCompute(in[i]);
      if (softmax_) {
        for (int64_t b = 0; b < n; ++b) {
          for (int64_t j = 0; j < d; ++j) {
            double* base = logp.data() + b * c * d + j;
            double m = -std::numeric_limits<double>::infinity();
            for (int64_t k = 0; k < c; ++k) m = std::max(m, base[k * d]);
            double s = 0;
            for (int64_t k = 0; k < c; ++k) s += std::exp(base[k * d] - m);
            const double shift = m + std::log(s);
            for (int64_t k = 0; k < c; ++k) base[k * d] -= shift;
          }
        }
        if (ctx.has_output(1)) {
          ONNXFLOW_ASSIGN_OR_RETURN(Tensor* lp, ctx.Allocate(1, x->dtype(), x->shape()));
          T* out = lp->mutable_data<T>();
          for (int64_t i = 0; i < x->size(); ++i) out[i] = FromCompute<T>(static_cast<ComputeType<T>>(logp[i]));
        }
      }
      std::vector<double> loss(n * d);
      double loss_sum = 0, weight_sum = 0;
      for (int64_t b = 0; b < n; ++b) {
        for (int64_t j = 0; j < d; ++j) {
          const int64_t t = target[b * d + j];
          double l = 0;
          if (!(has_ignore_index_ && t == ignore_index_)) {
            const double w = weight.empty() ? 1.0 : weight[t];
            l = -logp[(b * c + t) * d + j] * w;
            weight_sum += w;
          }
          loss[b * d + j] = l;
          loss_sum += l;
        }
      }
      if (reduction_ == Reduction::kNone) {
        ONNXFLOW_ASSIGN_OR_RETURN(Tensor* out, ctx.Allocate(0, x->dtype(), expected_target));
        T* o = out->mutable_data<T>();
        for (size_t i = 0; i < loss.size(); ++i) o[i] = FromCompute<T>(static_cast<ComputeType<T>>(loss[i]));
        return Status::Ok();
      }
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor* out, ctx.Allocate(0, x->dtype(), {}));
      const double r = reduction_ == Reduction::kSum ? loss_sum : (weight_sum == 0 ? 0.0 : loss_sum / weight_sum);
      out->mutable_data<T>()[0] = FromCompute<T>(static_cast<ComputeType<T>>(r));
      return Status::Ok();
    });
  }

 private:
  bool softmax_ = false;
  Reduction reduction_ = Reduction::kMean;
  bool has_ignore_index_ = false;
  int64_t ignore_index_ = 0;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterLosses(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "NegativeLogLikelihoodLoss", 12, kOpenEnded,
                                             Make<LossKernel>(false)));
  return registry.Register(kOnnxDomain, "SoftmaxCrossEntropyLoss", 12, kOpenEnded,
                           Make<LossKernel>(true));
}

}  // namespace onnxflow
