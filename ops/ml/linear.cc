// LinearRegressor-1 and LinearClassifier-1 (ai.onnx.ml): scores = X * W^T + intercepts over
// X viewed as [N, C], with W the coefficients as [E, C]; then the post transform.
//   - LinearRegressor: Y = scores [N, targets] as float.
//   - LinearClassifier: Z = scores [N, E'] as float, Y = the label of the best score. With one
//     coefficient row and two labels the scores become [-s, s] (as in the ONNX reference); with
//     one row otherwise, Y = labels[0] where the score passes the threshold (0, or 0.5 after a
//     transform), else 0 / "".
#include <algorithm>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/ml/register.h"
#include "ops/ml/numeric_rows.h"
#include "ops/ml/post_transform.h"

namespace onnxflow {
namespace {

struct LinearModel {
  std::vector<double> coefficients;  // [E, C]
  std::vector<double> intercepts;    // [E] or empty
  int64_t outputs = 1;               // E

  Status Check(int64_t c) const {
    if (c * outputs != static_cast<int64_t>(coefficients.size())) {
      return InvalidArgument("X has " + std::to_string(c) + " features, the model " + std::to_string(coefficients.size()) +
                             " coefficients for " + std::to_string(outputs) + " outputs");
    }
    return Status::Ok();
  }
  void Score(const double* x, int64_t c, double* out) const { Score(x, c, outputs, out); }
  void Score(const double* x, int64_t c, int64_t rows, double* out) const {
    for (int64_t e = 0; e < rows; ++e) {
      const double* w = coefficients.data() + e * c;
      double s = intercepts.empty() ? 0.0 : intercepts[e];
      for (int64_t i = 0; i < c; ++i) s += x[i] * w[i];
      out[e] = s;
    }
  }
};

Result<LinearModel> ReadLinear(const KernelInfo& info, int64_t outputs) {
  LinearModel m;
  const std::vector<float> coef = info.GetFloats("coefficients");
  const std::vector<float> inter = info.GetFloats("intercepts");
  m.coefficients.assign(coef.begin(), coef.end());
  m.intercepts.assign(inter.begin(), inter.end());
  m.outputs = outputs;
  if (outputs < 1) return InvalidArgument("the number of outputs must be >= 1, got " + std::to_string(outputs));
  if (m.coefficients.empty() || m.coefficients.size() % outputs != 0) {
    return InvalidArgument(std::to_string(m.coefficients.size()) + " coefficients do not split into " + std::to_string(outputs) + " rows");
  }
  if (!m.intercepts.empty() && static_cast<int64_t>(m.intercepts.size()) != outputs) {
    return InvalidArgument("intercepts has " + std::to_string(m.intercepts.size()) + " entries for " + std::to_string(outputs) + " outputs");
  }
  return m;
}

class LinearRegressor final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::unique_ptr<LinearRegressor> k(new LinearRegressor());
    ONNXFLOW_ASSIGN_OR_RETURN(k->model_, ReadLinear(info, info.GetInt("targets", 1)));
    ONNXFLOW_ASSIGN_OR_RETURN(k->transform_, PostTransformFromString(info.GetString("post_transform", "NONE")));
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(RowLoader load, NumericRowLoader(x->dtype(), "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(RowsView view, AsRows(*x, "X"));
    ONNXFLOW_RETURN_IF_ERROR(model_.Check(view.cols));
    const int64_t e = model_.outputs;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kFloat, Shape{view.rows, e}));
    float* out = y->mutable_data<float>();
    ParallelFor(ctx, view.rows, view.cols * e + e, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(view.cols)), scores(static_cast<size_t>(e));
      for (int64_t r = begin; r < end; ++r) {
        load(x->raw_data(), r * view.cols, view.cols, row.data());
        model_.Score(row.data(), view.cols, scores.data());
        ApplyPostTransform(transform_, scores.data(), e);
        for (int64_t t = 0; t < e; ++t) out[r * e + t] = static_cast<float>(scores[t]);
      }
    });
    return Status::Ok();
  }

 private:
  LinearRegressor() = default;
  LinearModel model_;
  PostTransform transform_ = PostTransform::kNone;
};

class LinearClassifier final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::unique_ptr<LinearClassifier> k(new LinearClassifier());
    const bool ints = info.has_attribute("classlabels_ints");
    if (ints == info.has_attribute("classlabels_strings")) {
      return InvalidArgument("exactly one of classlabels_ints and classlabels_strings must be set");
    }
    k->int_labels_ = info.GetInts("classlabels_ints");
    k->string_labels_ = info.GetStrings("classlabels_strings");
    k->ints_ = ints;
    const int64_t n_labels = static_cast<int64_t>(ints ? k->int_labels_.size() : k->string_labels_.size());
    if (n_labels == 0) return InvalidArgument("the class label list is empty");
    // The coefficients are [E, C]; E is only known once C is (at run time).
    const std::vector<float> coef = info.GetFloats("coefficients");
    const std::vector<float> intercepts = info.GetFloats("intercepts");
    if (coef.empty()) return InvalidArgument("attribute 'coefficients' is required");
    if (!intercepts.empty() && coef.size() % intercepts.size() != 0) {
      return InvalidArgument(std::to_string(coef.size()) + " coefficients do not split into " +
                             std::to_string(intercepts.size()) + " rows (one per intercept)");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(k->transform_, PostTransformFromString(info.GetString("post_transform", "NONE")));
    k->model_.coefficients.assign(coef.begin(), coef.end());
    k->model_.intercepts.assign(intercepts.begin(), intercepts.end());
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(RowLoader load, NumericRowLoader(x->dtype(), "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(RowsView view, AsRows(*x, "X"));
    const int64_t c = view.cols;
    if (c == 0) return InvalidArgument("X has no features");
    const int64_t rows = static_cast<int64_t>(model_.coefficients.size()) / c;
    if (rows < 1 || rows * c != static_cast<int64_t>(model_.coefficients.size())) {
      return InvalidArgument("X has " + std::to_string(c) + " features, which does not divide the " +
                             std::to_string(model_.coefficients.size()) + " coefficients into rows");
    }
    if (!model_.intercepts.empty() && static_cast<int64_t>(model_.intercepts.size()) != rows) {
      return InvalidArgument("intercepts has " + std::to_string(model_.intercepts.size()) + " entries for " +
                             std::to_string(rows) + " coefficient rows");
    }
    const int64_t n_labels = static_cast<int64_t>(ints_ ? int_labels_.size() : string_labels_.size());
    const bool binary = rows == 1 && n_labels == 2;
    const int64_t width = binary ? 2 : rows;
    if (width > 1 && width > n_labels) {
      return InvalidArgument(std::to_string(width) + " scores for " + std::to_string(n_labels) + " labels");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, ints_ ? DataType::kInt64 : DataType::kString, Shape{view.rows}));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * z, ctx.Allocate(1, DataType::kFloat, Shape{view.rows, width}));
    float* scores_out = z->mutable_data<float>();
    std::vector<double> row(static_cast<size_t>(c)), scores(static_cast<size_t>(width));
    for (int64_t r = 0; r < view.rows; ++r) {
      load(x->raw_data(), r * c, c, row.data());
      model_.Score(row.data(), c, rows, scores.data());
      if (binary) {
        scores[1] = scores[0];
        scores[0] = -scores[1];
      }
      ApplyPostTransform(transform_, scores.data(), width);
      for (int64_t e = 0; e < width; ++e) scores_out[r * width + e] = static_cast<float>(scores[e]);
      if (width > 1) {
        const int64_t best = std::max_element(scores.begin(), scores.end()) - scores.begin();
        if (ints_) y->mutable_data<int64_t>()[r] = int_labels_[best];
        else y->mutable_data<std::string>()[r] = string_labels_[best];
      } else {
        const bool positive = scores[0] >= (transform_ == PostTransform::kNone ? 0.0 : 0.5);
        if (ints_) y->mutable_data<int64_t>()[r] = positive ? int_labels_[0] : 0;
        else y->mutable_data<std::string>()[r] = positive ? string_labels_[0] : std::string();
      }
    }
    return Status::Ok();
  }

 private:
  LinearClassifier() = default;
  LinearModel model_;  // outputs unused: the row count follows from C
  bool ints_ = true;
  std::vector<int64_t> int_labels_;
  std::vector<std::string> string_labels_;
  PostTransform transform_ = PostTransform::kNone;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterLinear(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMlDomain, "LinearRegressor", 1, kOpenEnded, Make<LinearRegressor>()));
  return registry.Register(kMlDomain, "LinearClassifier", 1, kOpenEnded, Make<LinearClassifier>());
}

}  // namespace onnxflow
