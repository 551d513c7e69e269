// SVMRegressor-1 (ai.onnx.ml): one score per row of X ([N, C] or [C]) as float [N, 1]:
//   with support vectors: sum_j coefficients[j] * K(x, sv_j) + rho[0]
//   without (n_supports = 0): the linear model coefficients . x + rho[0]
// K is LINEAR (x.y), POLY ((gamma x.y + coef0)^degree), RBF (exp(-gamma |x-y|^2)) or SIGMOID
// (tanh(gamma x.y + coef0)). one_class maps the score to +1 / -1. Then the post transform.
#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/ml/register.h"
#include "ops/ml/numeric_rows.h"
#include "ops/ml/post_transform.h"
#include "ops/ml/svm_kernel.h"

namespace onnxflow {
namespace {

class SVMRegressor final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::unique_ptr<SVMRegressor> k(new SVMRegressor());
    ONNXFLOW_ASSIGN_OR_RETURN(k->kernel_, SvmKernel::FromAttributes(info));
    const std::vector<float> coef = info.GetFloats("coefficients");
    const std::vector<float> sv = info.GetFloats("support_vectors");
    const std::vector<float> rho = info.GetFloats("rho");
    k->coefficients_.assign(coef.begin(), coef.end());
    k->support_vectors_.assign(sv.begin(), sv.end());
    k->n_supports_ = info.GetInt("n_supports", 0);
    k->one_class_ = info.GetInt("one_class", 0) != 0;
    k->rho_ = rho.empty() ? 0.0 : rho[0];
    if (k->n_supports_ < 0) return InvalidArgument("n_supports must be >= 0");
    if (k->n_supports_ > 0) {
      if (static_cast<int64_t>(k->coefficients_.size()) != k->n_supports_) {
        return InvalidArgument(std::to_string(k->coefficients_.size()) + " coefficients for " + std::to_string(k->n_supports_) + " support vectors");
      }
      if (k->support_vectors_.empty() || k->support_vectors_.size() % k->n_supports_ != 0) {
        return InvalidArgument(std::to_string(k->support_vectors_.size()) + " support vector values do not split into " +
                               std::to_string(k->n_supports_) + " vectors");
      }
    } else {
      k->kernel_ = SvmKernel::Linear();  // the linear (liblinear) form
    }
    ONNXFLOW_ASSIGN_OR_RETURN(k->transform_, PostTransformFromString(info.GetString("post_transform", "NONE")));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(RowLoader load, NumericRowLoader(x->dtype(), "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(RowsView view, AsRows(*x, "X"));
    const int64_t c = view.cols;
    const int64_t want = n_supports_ > 0 ? static_cast<int64_t>(support_vectors_.size()) / n_supports_
                                         : static_cast<int64_t>(coefficients_.size());
    if (c != want) {
      return InvalidArgument("X has " + std::to_string(c) + " features, the model expects " + std::to_string(want));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kFloat, Shape{view.rows, 1}));
    float* out = y->mutable_data<float>();
    const int64_t vectors = n_supports_ > 0 ? n_supports_ : 1;
    ParallelFor(ctx, view.rows, c * vectors * 2, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(c));
      for (int64_t r = begin; r < end; ++r) {
        load(x->raw_data(), r * c, c, row.data());
        double s = rho_;
        if (n_supports_ > 0) {
          for (int64_t j = 0; j < n_supports_; ++j) s += coefficients_[j] * kernel_(row.data(), support_vectors_.data() + j * c, c);
        } else {
          s += kernel_(row.data(), coefficients_.data(), c);
        }
        if (one_class_) s = s > 0 ? 1.0 : -1.0;
        ApplyPostTransform(transform_, &s, 1);
        out[r] = static_cast<float>(s);
      }
    });
    return Status::Ok();
  }

 private:
  SVMRegressor() = default;

  SvmKernel kernel_;
  std::vector<double> coefficients_, support_vectors_;
  int64_t n_supports_ = 0;
  bool one_class_ = false;
  double rho_ = 0;
  PostTransform transform_ = PostTransform::kNone;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSVMRegressor(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "SVMRegressor", 1, kOpenEnded, Make<SVMRegressor>());
}

}  // namespace onnxflow
