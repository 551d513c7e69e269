// BatchNormalization, versions 1 through 15.
//
// Inference: y = (x - mean) / sqrt(var + epsilon) * scale + bias per channel (dim 1 of x, which is
// [N, C, D1, ...]); each (n, c) plane is one affine SIMD pass. Training (training_mode = 1 since
// 14; is_test = 0 before 7): the batch's own mean and population variance normalize x, and the
// optional outputs give running_mean / running_var = input * momentum + batch * (1 - momentum)
// (and before 14 also the saved batch mean and variance). scale/bias/mean/var may have a float type
// other than x's (version 15 allows it); they are read as x's compute type. Versions 7 and earlier
// with spatial = 0 take parameters of shape [C, D1, ...], one per (channel, position) (inference only).
#include "ops/nn/register.h"

#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/norm_util.h"

namespace onnxflow {
namespace {

class BatchNormKernel : public OpKernel {
 public:
  explicit BatchNormKernel(const KernelInfo& info)
      : epsilon_(info.GetFloat("epsilon", 1e-5f)),
        momentum_(info.GetFloat("momentum", 0.9f)),
        spatial_(info.opset() >= 9 || info.GetInt("spatial", 1) != 0),
        training_(info.opset() >= 14 ? info.GetInt("training_mode", 0) != 0
                                     : (info.opset() < 7 && info.GetInt("is_test", 0) == 0 && info.output_count() > 1)) {}

  Status Compute(KernelContext& ctx) const override { return RunOnChannelPlanes(*this, ctx); }

  // Called by RunOnChannelPlanes with T the element type of x.
  template <typename T>
  Status Run(KernelContext& ctx, const Tensor& x, const ChannelPlanes& planes) const {
    using C = NormCompute<T>;
    const int64_t n = planes.batch, c = planes.channels, plane = planes.plane;
    static const char* kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
    std::vector<C> params[5];
    // Before version 9, spatial = 0 gave every (channel, position) its own parameters.
    const bool per_element = !spatial_ && plane > 1;
    for (int i = 1; i < 5; ++i) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* p, ctx.RequireTensor(i));
      ONNXFLOW_ASSIGN_OR_RETURN(params[i], ParamOfSize<C>(*p, kNames[i], per_element ? c * plane : c));
    }
    if (per_element) {
      if (training_) return Unimplemented("BatchNormalization training with spatial = 0");
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x.dtype(), x.shape()));
      const T* in = x.data<T>();
      T* out = y->mutable_data<T>();
      const int64_t per_image = c * plane;
      for (int64_t i = 0; i < n * per_image; ++i) {
        const int64_t k = i % per_image;
        const double v = (static_cast<double>(ToCompute(in[i])) - params[3][k]) /
                             std::sqrt(static_cast<double>(params[4][k]) + epsilon_) * params[1][k] + params[2][k];
        out[i] = FromCompute<T>(static_cast<ComputeType<T>>(v));
      }
      return Status::Ok();
    }
    const std::vector<C>& scale = params[1];
    const std::vector<C>& bias = params[2];
    std::vector<C> mean = params[3], var = params[4];

    std::vector<C> in_storage;
    const C* in = ComputeView<C>(x.data<T>(), x.size(), in_storage);

    if (training_) {
      // Batch statistics per channel: over its plane in each of the N images.
      for (int64_t ch = 0; ch < c; ++ch) {
        const Moments moments = MeanAndVariance(in + ch * plane, n, plane, c * plane);
        mean[ch] = static_cast<C>(moments.mean);
        var[ch] = static_cast<C>(moments.var);
      }
      ONNXFLOW_RETURN_IF_ERROR(WriteTrainingOutputs<T>(ctx, params[3], params[4], mean, var, c));
    }

    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x.dtype(), x.shape()));
    std::vector<C> out_storage;
    C* out = ComputeOut<C>(y->mutable_data<T>(), y->size(), out_storage);
    // Per channel, in the compute type and in ONNX Runtime's order, each step rounded:
    // a = (1 / sqrt(var + epsilon)) * scale, b = bias - mean * a, then y = x * a + b (AffineRow).
    // A dynamically quantized model requantizes this output from its range, where an ulp moves a
    // byte: a ShuffleNet of 49 ConvInteger -> BatchNormalization layers ended 0.01 from ONNX Runtime
    // in its softmax with `a` taken in double. (No fused multiply-add in b: the x86-64 baseline
    // this file compiles for has none.)
    std::vector<C> a(static_cast<size_t>(c)), shift(static_cast<size_t>(c));
    for (int64_t ch = 0; ch < c; ++ch) {
      const C inv_std = C{1} / std::sqrt(var[ch] + static_cast<C>(epsilon_));
      a[ch] = inv_std * scale[ch];
      const C centre = mean[ch] * a[ch];
      shift[ch] = bias[ch] - centre;
    }
    ParallelFor(ctx, n * c, plane * 2, [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        const int64_t ch = row % c;
        Rows<C>::Affine(in + row * plane, a[ch], shift[ch], out + row * plane, plane);
      }
    });
    StoreBack<C>(out, y->mutable_data<T>(), y->size());
    return Status::Ok();
  }

 private:
  // Version 14+: outputs 1, 2 are running mean / var. Before: 1, 2 running, 3, 4 saved batch stats.
  template <typename T>
  Status WriteTrainingOutputs(KernelContext& ctx, const std::vector<NormCompute<T>>& in_mean,
                              const std::vector<NormCompute<T>>& in_var, const std::vector<NormCompute<T>>& mean,
                              const std::vector<NormCompute<T>>& var, int64_t c) const {
    const Tensor* mean_tensor = ctx.input_tensor(3);
    auto write = [&](int out, auto value_of) -> Status {
      if (!ctx.has_output(out)) return Status::Ok();
      // Running stats keep the type of input_mean/var (version 15 lets them differ from X).
      const DataType dt = mean_tensor->dtype();
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor* t, ctx.Allocate(out, dt, {c}));
      return DispatchNormType(dt, [&](auto tag) {
        using P = decltype(tag);
        P* p = t->mutable_data<P>();
        for (int64_t i = 0; i < c; ++i) p[i] = FromCompute<P>(static_cast<ComputeType<P>>(value_of(i)));
        return Status::Ok();
      });
    };
    const double mom = momentum_;
    ONNXFLOW_RETURN_IF_ERROR(write(1, [&](int64_t i) { return in_mean[i] * mom + mean[i] * (1 - mom); }));
    ONNXFLOW_RETURN_IF_ERROR(write(2, [&](int64_t i) { return in_var[i] * mom + var[i] * (1 - mom); }));
    ONNXFLOW_RETURN_IF_ERROR(write(3, [&](int64_t i) { return static_cast<double>(mean[i]); }));
    ONNXFLOW_RETURN_IF_ERROR(write(4, [&](int64_t i) { return static_cast<double>(var[i]); }));
    return Status::Ok();
  }

  float epsilon_;
  float momentum_;
  bool spatial_;
  bool training_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBatchNorm(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "BatchNormalization", 1, kOpenEnded, Make<BatchNormKernel>());
}

}  // namespace onnxflow
