// Normalizer-1 (ai.onnx.ml): scales each row of a [N, C] (or [C]) input to float:
//   MAX: x / max(x)   L1: x / sum(|x|)   L2: x / sqrt(sum(x^2))
// A zero divisor leaves the row as it is (the spec's "Y == X").
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/ml/register.h"
#include "ops/ml/numeric_rows.h"

namespace onnxflow {
namespace {

enum class Norm { kMax, kL1, kL2 };

class Normalizer final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const std::string norm = info.GetString("norm", "MAX");
    Norm n;
    if (norm == "MAX") n = Norm::kMax;
    else if (norm == "L1") n = Norm::kL1;
    else if (norm == "L2") n = Norm::kL2;
    else return InvalidArgument("norm must be MAX, L1 or L2, got '" + norm + "'");
    return std::unique_ptr<OpKernel>(new Normalizer(n));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(RowLoader load, NumericRowLoader(x->dtype(), "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(RowsView view, AsRows(*x, "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kFloat, x->shape()));
    float* out = y->mutable_data<float>();
    const int64_t c = view.cols;
    ParallelFor(ctx, view.rows, c * 3, [&](int64_t begin, int64_t end) {
      std::vector<double> row(static_cast<size_t>(c));
      for (int64_t r = begin; r < end; ++r) {
        load(x->raw_data(), r * c, c, row.data());
        double divisor = 0;
        if (norm_ == Norm::kMax) {
          divisor = c > 0 ? *std::max_element(row.begin(), row.end()) : 0.0;
        } else if (norm_ == Norm::kL1) {
          for (double v : row) divisor += std::abs(v);
        } else {
          for (double v : row) divisor += v * v;
          divisor = std::sqrt(divisor);
        }
        for (int64_t i = 0; i < c; ++i) {
          out[r * c + i] = static_cast<float>(divisor != 0 ? row[i] / divisor : row[i]);
        }
      }
    });
    return Status::Ok();
  }

 private:
  explicit Normalizer(Norm norm) : norm_(norm) {}
  Norm norm_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterNormalizer(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "Normalizer", 1, kOpenEnded, Make<Normalizer>());
}

}  // namespace onnxflow
