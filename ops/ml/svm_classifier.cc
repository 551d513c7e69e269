// SVMClassifier-1 (ai.onnx.ml), following the ONNX reference implementation (libsvm's
// conventions):
//   - with support vectors (vectors_per_class): one-vs-one. For each class pair (i, j) the score
//     is rho[k] + sum over class i's vectors of coefficients[j-1][v] K(x, v) + sum over class j's
//     of coefficients[i][v] K(x, v); a positive score votes for i, else j. With prob_a/prob_b
//     the pairwise scores become Platt probabilities coupled into one per class (libsvm's
//     multiclass_probability); otherwise Z holds the pairwise scores.
//   - without: liblinear form, score[c] = rho[0] + coefficients[c] . x.
// The label is the class with the most votes (or the best score); with a single rho the binary
// rules of the reference apply, and a single score is widened to two columns.
#include <algorithm>
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

// libsvm's coupling of pairwise probabilities r[i][j] into class probabilities (Wu, Lin and
// Weng 2004, method 2), iterated to a fixed point.
std::vector<double> MulticlassProbability(int64_t k, const std::vector<double>& r) {
  auto R = [&](int64_t i, int64_t j) { return r[i * k + j]; };
  std::vector<double> q(k * k), qp(k), p(k, 1.0 / static_cast<double>(k));
  for (int64_t t = 0; t < k; ++t) {
    q[t * k + t] = 0;
    for (int64_t j = 0; j < t; ++j) {
      q[t * k + t] += R(j, t) * R(j, t);
      q[t * k + j] = q[j * k + t];
    }
    for (int64_t j = t + 1; j < k; ++j) {
      q[t * k + t] += R(j, t) * R(j, t);
      q[t * k + j] = -R(j, t) * R(t, j);
    }
  }
  const int64_t max_iter = std::max<int64_t>(100, k);
  const double eps = 0.005 / static_cast<double>(k);
  for (int64_t iter = 0; iter < max_iter; ++iter) {
    double pqp = 0;
    for (int64_t t = 0; t < k; ++t) {
      qp[t] = 0;
      for (int64_t j = 0; j < k; ++j) qp[t] += q[t * k + j] * p[j];
      pqp += p[t] * qp[t];
    }
    double max_error = 0;
    for (int64_t t = 0; t < k; ++t) max_error = std::max(max_error, std::abs(qp[t] - pqp));
    if (max_error < eps) break;
    for (int64_t t = 0; t < k; ++t) {
      const double diff = (-qp[t] + pqp) / q[t * k + t];
      p[t] += diff;
      pqp = (pqp + diff * (diff * q[t * k + t] + 2 * qp[t])) / ((1 + diff) * (1 + diff));
      for (int64_t j = 0; j < k; ++j) {
        qp[j] = (qp[j] + diff * q[t * k + j]) / (1 + diff);
        p[j] /= (1 + diff);
      }
    }
  }
  return p;
}

class SVMClassifier final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::unique_ptr<SVMClassifier> k(new SVMClassifier());
    k->int_labels_ = info.GetInts("classlabels_ints");
    k->string_labels_ = info.GetStrings("classlabels_strings");
    if (k->int_labels_.empty() == k->string_labels_.empty()) {
      return InvalidArgument("exactly one of classlabels_ints and classlabels_strings must be set (non-empty)");
    }
    k->classes_ = static_cast<int64_t>(std::max(k->int_labels_.size(), k->string_labels_.size()));
    ONNXFLOW_ASSIGN_OR_RETURN(k->kernel_, SvmKernel::FromAttributes(info));
    auto doubles = [&](const char* name) {
      const std::vector<float> f = info.GetFloats(name);
      return std::vector<double>(f.begin(), f.end());
    };
    k->coefficients_ = doubles("coefficients");
    k->support_vectors_ = doubles("support_vectors");
    k->rho_ = doubles("rho");
    k->prob_a_ = doubles("prob_a");
    k->prob_b_ = doubles("prob_b");
    if (k->coefficients_.empty()) return InvalidArgument("attribute 'coefficients' is required");
    if (k->rho_.empty()) return InvalidArgument("attribute 'rho' is required");
    if (k->prob_a_.size() != k->prob_b_.size()) return InvalidArgument("prob_a and prob_b must have the same length");
    ONNXFLOW_ASSIGN_OR_RETURN(k->transform_, PostTransformFromString(info.GetString("post_transform", "NONE")));
    k->all_positive_ = *std::min_element(k->coefficients_.begin(), k->coefficients_.end()) >= 0;

    for (int64_t count : info.GetInts("vectors_per_class")) {
      if (count < 0) return InvalidArgument("vectors_per_class has a negative entry");
      k->starts_.push_back(k->vectors_);
      k->counts_.push_back(count);
      k->vectors_ += count;
    }
    if (k->vectors_ > 0) {
      if (static_cast<int64_t>(k->counts_.size()) != k->classes_) {
        return InvalidArgument("vectors_per_class has " + std::to_string(k->counts_.size()) + " entries for " +
                               std::to_string(k->classes_) + " classes");
      }
      if (k->support_vectors_.empty() || k->support_vectors_.size() % k->vectors_ != 0) {
        return InvalidArgument("support_vectors do not split into " + std::to_string(k->vectors_) + " vectors");
      }
      k->features_ = static_cast<int64_t>(k->support_vectors_.size()) / k->vectors_;
      const int64_t pairs = k->classes_ * (k->classes_ - 1) / 2;
      if (static_cast<int64_t>(k->coefficients_.size()) != (k->classes_ - 1) * k->vectors_) {
        return InvalidArgument("coefficients must be (classes - 1) x vectors = " + std::to_string((k->classes_ - 1) * k->vectors_) +
                               ", got " + std::to_string(k->coefficients_.size()));
      }
      if (static_cast<int64_t>(k->rho_.size()) < pairs) return InvalidArgument("rho needs one entry per class pair");
      if (!k->prob_a_.empty() && static_cast<int64_t>(k->prob_a_.size()) < pairs) {
        return InvalidArgument("prob_a/prob_b need one entry per class pair");
      }
    } else {
      k->kernel_ = SvmKernel::Linear();
      if (k->coefficients_.size() % k->classes_ != 0) {
        return InvalidArgument("coefficients do not split into one row per class");
      }
      k->features_ = static_cast<int64_t>(k->coefficients_.size()) / k->classes_;
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(RowLoader load, NumericRowLoader(x->dtype(), "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(RowsView view, AsRows(*x, "X"));
    if (view.cols != features_) {
      return InvalidArgument("X has " + std::to_string(view.cols) + " features, the model expects " + std::to_string(features_));
    }
    const bool ints = !int_labels_.empty();
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, ints ? DataType::kInt64 : DataType::kString, Shape{view.rows}));
    const int64_t width = OutputWidth();
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * z, ctx.Allocate(1, DataType::kFloat, Shape{view.rows, width}));
    float* scores_out = z->mutable_data<float>();
    std::vector<double> row(static_cast<size_t>(features_));
    for (int64_t r = 0; r < view.rows; ++r) {
      load(x->raw_data(), r * features_, features_, row.data());
      std::vector<double> scores;
      int64_t label = Classify(row.data(), &scores);
      for (int64_t c = 0; c < width; ++c) scores_out[r * width + c] = static_cast<float>(scores[c]);
      if (ints) {
        y->mutable_data<int64_t>()[r] = label;
      } else {
        y->mutable_data<std::string>()[r] = label >= 0 && label < classes_ ? string_labels_[label] : std::string();
      }
    }
    return Status::Ok();
  }

 private:
  SVMClassifier() = default;

  bool svc() const { return vectors_ > 0; }
  bool has_proba() const { return svc() && !prob_a_.empty(); }
  int64_t RawWidth() const {
    if (!svc()) return classes_;
    return has_proba() ? classes_ : classes_ * (classes_ - 1) / 2;
  }
  // The binary rules (a single rho) write two columns for two labels.
  int64_t AdditionalScores() const { return rho_.size() == 1 && classes_ == 2 ? 2 : -1; }
  int64_t OutputWidth() const {
    const int64_t raw = RawWidth();
    if (raw != 1) return raw;
    if (transform_ == PostTransform::kProbit) return 1;
    return AdditionalScores() >= 0 ? 2 : 1;
  }

  // Label for one row (an int label, or an index into string_labels_); fills the Z row.
  int64_t Classify(const double* x, std::vector<double>* out) const {
    std::vector<double> scores;
    std::vector<double> votes;
    if (!svc()) {
      for (int64_t c = 0; c < classes_; ++c) scores.push_back(rho_[0] + kernel_(x, coefficients_.data() + c * features_, features_));
    } else {
      std::vector<double> kernels(static_cast<size_t>(vectors_));
      for (int64_t v = 0; v < vectors_; ++v) kernels[v] = kernel_(x, support_vectors_.data() + v * features_, features_);
      votes.assign(static_cast<size_t>(classes_), 0.0);
      int64_t pair = 0;
      for (int64_t i = 0; i < classes_; ++i) {
        for (int64_t j = i + 1; j < classes_; ++j, ++pair) {
          double s = rho_[pair];
          const double* ci = coefficients_.data() + (j - 1) * vectors_;
          const double* cj = coefficients_.data() + i * vectors_;
          for (int64_t v = starts_[i]; v < starts_[i] + counts_[i]; ++v) s += ci[v] * kernels[v];
          for (int64_t v = starts_[j]; v < starts_[j] + counts_[j]; ++v) s += cj[v] * kernels[v];
          scores.push_back(s);
          votes[s > 0 ? i : j] += 1;
        }
      }
      if (has_proba()) {
        std::vector<double> pairwise(static_cast<size_t>(classes_ * classes_), 0.0);
        int64_t at = 0;
        for (int64_t i = 0; i < classes_; ++i) {
          for (int64_t j = i + 1; j < classes_; ++j, ++at) {
            const double v = scores[at] * prob_a_[at] + prob_b_[at];
            double p = 1.0 - 1.0 / (1.0 + std::exp(-v));  // 1 - logistic
            p = std::min(std::max(p, 1e-7), 1 - 1e-7);
            pairwise[i * classes_ + j] = p;
            pairwise[j * classes_ + i] = 1 - p;
          }
        }
        scores = MulticlassProbability(classes_, pairwise);
      }
    }
    const std::vector<double>& basis = votes.empty() ? scores : votes;
    const int64_t best = basis.empty() ? 0 : std::max_element(basis.begin(), basis.end()) - basis.begin();
    const double best_weight = basis.empty() ? 0.0 : basis[best];

    int64_t label;
    const bool ints = !int_labels_.empty();
    auto label_at = [&](int64_t i) { return ints ? int_labels_[i] : i; };
    if (rho_.size() == 1) {
      if (classes_ == 2) {
        if (!has_proba() && all_positive_ && best_weight >= 0.5) label = label_at(1);
        else label = label_at(best);
      } else {
        label = best_weight > 0 ? 1 : 0;
      }
    } else {
      label = label_at(best);
    }

    // Z: the scores after the transform; one score is widened by the binary rules.
    if (scores.size() == 1) {
      const double s = scores[0];
      if (transform_ == PostTransform::kProbit) {
        *out = {std::sqrt(2.0) * ErfInv(2 * s - 1)};
      } else if (AdditionalScores() >= 0) {
        *out = {-s, s};
        ApplyPostTransform(transform_, out->data(), 2);
      } else {
        *out = {s};
      }
    } else {
      *out = scores;
      ApplyPostTransform(transform_, out->data(), static_cast<int64_t>(out->size()));
    }
    return label;
  }

  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  int64_t classes_ = 0;
  SvmKernel kernel_;
  std::vector<double> coefficients_, support_vectors_, rho_, prob_a_, prob_b_;
  PostTransform transform_ = PostTransform::kNone;
  bool all_positive_ = false;
  std::vector<int64_t> starts_, counts_;
  int64_t vectors_ = 0;
  int64_t features_ = 0;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSVMClassifier(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "SVMClassifier", 1, kOpenEnded, Make<SVMClassifier>());
}

}  // namespace onnxflow
