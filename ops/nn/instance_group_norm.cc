// InstanceNormalization (1, 6, 22) and GroupNormalization (18, 21).
//
// Both normalize x = [N, C, D1, ...] over groups of whole channels: InstanceNormalization over
// each single channel, GroupNormalization over C / num_groups neighbouring channels. Statistics use
// the population variance, computed in two passes (mean, then squared deviations). Then each
// channel gets y = (x - mean) * inv_std * scale[c] + bias[c], one affine SIMD pass per plane.
// GroupNormalization-18 had one scale/bias per group; version 21 has one per channel.
#include "ops/nn/register.h"

#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/norm_util.h"

namespace onnxflow {
namespace {

class ChannelGroupNormKernel : public OpKernel {
 public:
  // num_groups == 0 means one group per channel (InstanceNormalization).
  ChannelGroupNormKernel(const KernelInfo& info, bool group_norm)
      : group_norm_(group_norm),
        per_group_params_(group_norm && info.opset() < 21),
        num_groups_(group_norm ? info.GetInt("num_groups", 0) : 0),
        epsilon_(info.GetFloat("epsilon", 1e-5f)) {}

  Status Compute(KernelContext& ctx) const override { return RunOnChannelPlanes(*this, ctx); }

  // Called by RunOnChannelPlanes with T the element type of x.
  template <typename T>
  Status Run(KernelContext& ctx, const Tensor& x, const ChannelPlanes& planes) const {
    using C = NormCompute<T>;
    const int64_t n = planes.batch, c = planes.channels, plane = planes.plane;
    const int64_t groups = group_norm_ ? num_groups_ : c;
    if (groups <= 0 || c % groups != 0) {
      return InvalidArgument("num_groups = " + std::to_string(groups) + " must be positive and divide the " +
                             std::to_string(c) + " channels");
    }
    const int64_t per_group = c / groups;
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* scale_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* bias_t, ctx.RequireTensor(2));
    const int64_t param_count = per_group_params_ ? groups : c;
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<C> scale, ParamOfSize<C>(*scale_t, "scale", param_count));
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<C> bias, ParamOfSize<C>(*bias_t, "B", param_count));

    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x.dtype(), x.shape()));
    std::vector<C> in_storage, out_storage;
    const C* in = ComputeView<C>(x.data<T>(), x.size(), in_storage);
    C* out = ComputeOut<C>(y->mutable_data<T>(), y->size(), out_storage);
    const int64_t group_size = per_group * plane;
    ParallelFor(ctx, n * groups, group_size * 4, [&](int64_t b, int64_t e) {
      for (int64_t g = b; g < e; ++g) {
        const C* src = in + g * group_size;
        C* dst = out + g * group_size;
        const Moments moments = MeanAndVariance(src, group_size);
        const double mean = moments.mean;
        const double inv = 1.0 / std::sqrt(moments.var + epsilon_);
        for (int64_t k = 0; k < per_group; ++k) {
          const int64_t ch = (g % groups) * per_group + k;
          const int64_t p = per_group_params_ ? g % groups : ch;
          const double a = inv * scale[p];
          Rows<C>::Affine(src + k * plane, static_cast<C>(a), static_cast<C>(bias[p] - mean * a), dst + k * plane, plane);
        }
      }
    });
    StoreBack<C>(out, y->mutable_data<T>(), y->size());
    return Status::Ok();
  }

 private:
  bool group_norm_;
  bool per_group_params_;
  int64_t num_groups_;
  float epsilon_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterInstanceGroupNorm(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "InstanceNormalization", 1, kOpenEnded,
                                             Make<ChannelGroupNormKernel>(/*group_norm=*/false)));
  return registry.Register(kOnnxDomain, "GroupNormalization", 18, kOpenEnded,
                           Make<ChannelGroupNormKernel>(/*group_norm=*/true));
}

}  // namespace onnxflow
