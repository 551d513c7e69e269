// Scaler-1 (ai.onnx.ml): Y = (X - offset) * scale as float, where offset and scale have one
// entry per feature (the last axis) or a single entry for all. float32 input runs the Highway
// loops in float_rows (in float); other types are computed in double.
#include <algorithm>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/ml/float_rows.h"
#include "ops/ml/register.h"
#include "ops/ml/numeric_rows.h"

namespace onnxflow {
namespace {

class Scaler final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::vector<float> offset = info.GetFloats("offset");
    std::vector<float> scale = info.GetFloats("scale");
    // A missing list means the identity for that step.
    if (offset.empty()) offset.assign(scale.empty() ? 1 : scale.size(), 0.0f);
    if (scale.empty()) scale.assign(offset.size(), 1.0f);
    if (offset.size() != scale.size()) {
      return InvalidArgument("offset and scale must have the same length, got " + std::to_string(offset.size()) +
                             " and " + std::to_string(scale.size()));
    }
    return std::unique_ptr<OpKernel>(new Scaler(std::move(offset), std::move(scale)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(RowLoader load, NumericRowLoader(x->dtype(), "X"));
    const int64_t features = x->rank() == 0 ? 1 : x->dim(x->rank() - 1);
    const int64_t k = static_cast<int64_t>(scale_.size());
    if (k != 1 && k != features) {
      return InvalidArgument("offset/scale have " + std::to_string(k) + " entries but X has " + std::to_string(features) +
                             " features (shape " + ShapeToString(x->shape()) + ")");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, DataType::kFloat, x->shape()));
    float* out = y->mutable_data<float>();
    const int64_t n = x->size();
    if (x->dtype() == DataType::kFloat) {  // the Highway path: float math, rows of features
      const float* in = x->data<float>();
      if (k == 1) {
        ParallelFor(ctx, n, 2, [&](int64_t begin, int64_t end) {
          ml::ScaleAllF32(in + begin, end - begin, offset_[0], scale_[0], out + begin);
        });
      } else {
        ParallelFor(ctx, features > 0 ? n / features : 0, 2 * features, [&](int64_t begin, int64_t end) {
          for (int64_t r = begin; r < end; ++r) {
            ml::ScaleRowF32(in + r * features, features, offset_.data(), scale_.data(), out + r * features);
          }
        });
      }
      return Status::Ok();
    }
    ParallelFor(ctx, n, 2, [&](int64_t begin, int64_t end) {
      double buffer[256];
      for (int64_t at = begin; at < end; at += 256) {
        const int64_t m = std::min<int64_t>(256, end - at);
        load(x->raw_data(), at, m, buffer);
        for (int64_t i = 0; i < m; ++i) {
          const int64_t f = k == 1 ? 0 : (at + i) % features;
          out[at + i] = static_cast<float>((buffer[i] - offset_[f]) * scale_[f]);
        }
      }
    });
    return Status::Ok();
  }

 private:
  Scaler(std::vector<float> offset, std::vector<float> scale) : offset_(std::move(offset)), scale_(std::move(scale)) {}
  std::vector<float> offset_;
  std::vector<float> scale_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterScaler(KernelRegistry& registry) {
  return registry.Register(kMlDomain, "Scaler", 1, kOpenEnded, Make<Scaler>());
}

}  // namespace onnxflow
