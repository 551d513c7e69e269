// MeanVarianceNormalization (1, 9, 13): y = (x - mean) / (sqrt(var) + 1e-9) with mean and the
// population variance taken over `axes` (default [0, 2, 3]), as the spec's function body does.
// Version 1 had across_channels / normalize_variance attributes instead of axes.
#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/shape.h"
#include "ops/nn/register.h"
#include "ops/nn/norm_util.h"

namespace onnxflow {
namespace {

class MvnKernel : public OpKernel {
 public:
  explicit MvnKernel(const KernelInfo& info) {
    if (info.opset() < 9) {
      axes_ = info.GetInt("across_channels", 0) != 0 ? std::vector<int64_t>{0, 1, 2, 3} : std::vector<int64_t>{0, 2, 3};
      normalize_variance_ = info.GetInt("normalize_variance", 1) != 0;
    } else {
      axes_ = info.GetInts("axes", {0, 2, 3});
    }
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const int64_t rank = x->rank();
    std::vector<bool> reduced(rank, false);
    for (int64_t a : axes_) {
      ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, rank));
      reduced[axis] = true;
    }
    // Group id of every element: its index among the kept dims.
    const int64_t total = x->size();
    std::vector<int64_t> group(total);
    int64_t groups = 1;
    std::vector<int64_t> kept_stride(rank, 0);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (!reduced[d]) { kept_stride[d] = groups; groups *= x->dim(d); }
    }
    std::vector<int64_t> coord(rank, 0);
    for (int64_t i = 0; i < total; ++i) {
      int64_t g = 0;
      for (int64_t d = 0; d < rank; ++d) g += coord[d] * kept_stride[d];
      group[i] = g;
      for (int64_t d = rank - 1; d >= 0; --d) {
        if (++coord[d] < x->dim(d)) break;
        coord[d] = 0;
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x->dtype(), x->shape()));
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x->data<T>();
      T* out = y->mutable_data<T>();
      std::vector<double> sum(groups, 0.0), sq(groups, 0.0), count(groups, 0.0);
      for (int64_t i = 0; i < total; ++i) {
        sum[group[i]] += ToCompute(in[i]);
        count[group[i]] += 1;
      }
      for (int64_t g = 0; g < groups; ++g) sum[g] = count[g] > 0 ? sum[g] / count[g] : 0.0;
      for (int64_t i = 0; i < total; ++i) {
        const double dv = ToCompute(in[i]) - sum[group[i]];
        sq[group[i]] += dv * dv;
      }
      for (int64_t i = 0; i < total; ++i) {
        const int64_t g = group[i];
        double v = ToCompute(in[i]) - sum[g];
        if (normalize_variance_) v /= std::sqrt(count[g] > 0 ? sq[g] / count[g] : 0.0) + 1e-9;
        out[i] = FromCompute<T>(static_cast<ComputeType<T>>(v));
      }
      return Status::Ok();
    });
  }

 private:
  std::vector<int64_t> axes_;
  bool normalize_variance_ = true;
};

}  // namespace

Status RegisterMeanVarianceNorm(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "MeanVarianceNormalization", 1, kOpenEnded, Make<MvnKernel>());
}

}  // namespace onnxflow
