// FeatureVectorizer-1 (ai.onnx.ml): concatenates its inputs along the second axis into float
// [N, sum(inputdimensions)]. Input i is [N, C_i] (a [C_i] input is one row); its first
// inputdimensions[i] columns are copied, and missing columns are zero.
#include <algorithm>
#include <string>
#include <vector>

#include "ops/ml/register.h"
#include "ops/ml/numeric_rows.h"

namespace onnxflow {
namespace {

class FeatureVectorizer final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::vector<int64_t> dims = info.GetInts("inputdimensions");
    if (static_cast<int>(dims.size()) != info.input_count()) {
      return InvalidArgument("inputdimensions has " + std::to_string(dims.size()) + " entries for " +
                             std::to_string(info.input_count()) + " inputs");
    }
    int64_t total = 0;
    for (int64_t d : dims) {
      if (d < 0 || d > (int64_t{1} << 40)) return InvalidArgument("inputdimensions has an invalid entry " + std::to_string(d));
      total += d;
    }
    return std::unique_ptr<OpKernel>(new FeatureVectorizer(std::move(dims), total));
  }

  Status Compute(KernelContext& ctx) const override {
    int64_t rows = -1;
    std::vector<RowsView> views;
    std::vector<RowLoader> loaders;
    for (int i = 0; i < ctx.input_count(); ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(i));
      ONNXFLOW_ASSIGN_OR_RETURN(RowLoader load, NumericRowLoader(x->dtype(), "each input"));
      ONNXFLOW_ASSIGN_OR_RETURN(RowsView view, AsRows(*x, "each input"));
      if (rows >= 0 && view.rows != rows) {
        return InvalidArgument("input " + std::to_string(i) + " has " + std::to_string(view.rows) + " rows, input 0 has " + std::to_string(rows));
      }
      rows = view.rows;
      views.push_back(view);
      loaders.push_back(load);
    }
    if (rows < 0) return InvalidArgument("FeatureVectorizer needs at least one input");
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kFloat, Shape{rows, total_}));
    float* out = y->mutable_data<float>();
    std::vector<double> buffer;
    int64_t column = 0;
    for (size_t i = 0; i < views.size(); ++i) {
      const int64_t take = std::min(views[i].cols, dims_[i]);
      buffer.resize(static_cast<size_t>(take));
      const void* data = ctx.input_tensor(static_cast<int>(i))->raw_data();
      for (int64_t r = 0; r < rows; ++r) {
        loaders[i](data, r * views[i].cols, take, buffer.data());
        for (int64_t k = 0; k < take; ++k) out[r * total_ + column + k] = static_cast<float>(buffer[k]);
      }
      column += dims_[i];
    }
    return Status::Ok();
  }

 private:
  FeatureVectorizer(std::vector<int64_t> dims, int64_t total) : dims_(std::move(dims)), total_(total) {}
  std::vector<int64_t> dims_;
  int64_t total_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterFeatureVectorizer(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "FeatureVectorizer", 1, kOpenEnded, Make<FeatureVectorizer>());
}

}  // namespace onnxflow
