// The elementwise experimental ops ONNX removed at opset 10, for models of opsets 1-9:
//   Affine              y = alpha * x + beta                 (alpha 1, beta 0 by default)
//   Scale               y = scale * x                        (scale 1)
//   ImageScaler         y = scale * x + bias[c] on [N, C, H, W]   (scale 1, bias one per channel)
//   ParametricSoftplus  y = alpha * ln(1 + exp(beta * x))    (alpha and beta required)
//   ScaledTanh          y = alpha * tanh(beta * x)           (alpha and beta required)
// on float16, float and double (the spec's types), computed in float (double for double). The
// required attributes are those ONNX Runtime's kernels refuse to build without; ImageScaler's bias
// may be left out (zeros), as the spec's schema allows.
#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/legacy/register.h"

namespace onnxflow {
namespace legacy {
namespace {

enum class ScaleOp { kAffine, kScale, kImageScaler, kParametricSoftplus, kScaledTanh };

// Elements a task takes when the op has no channel planes: enough to amortize a task.
constexpr int64_t kRun = 16384;

class ScaleOpKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, ScaleOp op) {
    auto k = std::make_unique<ScaleOpKernel>();
    k->op_ = op;
    switch (op) {
      case ScaleOp::kAffine:
        k->alpha_ = info.GetFloat("alpha", 1.0f);
        k->beta_ = info.GetFloat("beta", 0.0f);
        break;
      case ScaleOp::kScale:
        k->alpha_ = info.GetFloat("scale", 1.0f);
        break;
      case ScaleOp::kImageScaler:
        k->alpha_ = info.GetFloat("scale", 1.0f);
        k->bias_ = info.GetFloats("bias");
        break;
      case ScaleOp::kParametricSoftplus:
      case ScaleOp::kScaledTanh:
        for (const char* name : {"alpha", "beta"}) {
          if (!info.has_attribute(name)) {
            return InvalidArgument(std::string("attribute '") + name + "' is required (" + info.op_type() +
                                   " has no default for it)");
          }
        }
        k->alpha_ = info.GetFloat("alpha", 1.0f);
        k->beta_ = info.GetFloat("beta", 1.0f);
        break;
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (!IsOneOf<float, double, Float16>(x->dtype())) {
      return InvalidArgument(std::string("input 0 must be float16, float or double, got ") + DataTypeName(x->dtype()));
    }
    // ImageScaler works on channel planes; the others on runs of the flat tensor.
    int64_t channels = 1, plane = kRun;
    if (op_ == ScaleOp::kImageScaler) {
      if (x->rank() != 4) return InvalidArgument("input must be [N, C, H, W], got " + ShapeToString(x->shape()));
      channels = x->dim(1);
      plane = x->dim(2) * x->dim(3);
      if (!bias_.empty() && static_cast<int64_t>(bias_.size()) != channels) {
        return InvalidArgument("attribute 'bias' has " + std::to_string(bias_.size()) + " values for " +
                               std::to_string(channels) + " channels");
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    const int64_t n = x->size();
    if (n == 0) return Status::Ok();
    const int64_t planes = (n + plane - 1) / plane;
    const int64_t cost = op_ == ScaleOp::kParametricSoftplus || op_ == ScaleOp::kScaledTanh ? 20 : 1;
    return DispatchType<float, double, Float16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeType<T>;
      const T* in = x->data<T>();
      T* out = y->mutable_data<T>();
      ParallelFor(ctx, planes, plane * cost, [&](int64_t p0, int64_t p1) {
        for (int64_t p = p0; p < p1; ++p) {
          const int64_t begin = p * plane, end = std::min(n, begin + plane);
          const C offset = op_ == ScaleOp::kImageScaler ? (bias_.empty() ? C(0) : C(bias_[p % channels])) : C(beta_);
          Apply<T, C>(in + begin, out + begin, end - begin, offset);
        }
      });
      return Status::Ok();
    });
  }

 private:
  template <typename T, typename C>
  void Apply(const T* in, T* out, int64_t n, C offset) const {
    const C a = static_cast<C>(alpha_), b = static_cast<C>(beta_);
    switch (op_) {
      case ScaleOp::kAffine:
      case ScaleOp::kScale:
      case ScaleOp::kImageScaler:
        for (int64_t i = 0; i < n; ++i) out[i] = FromCompute<T>(a * ToCompute(in[i]) + offset);
        return;
      case ScaleOp::kParametricSoftplus:
        // ln(1 + e^z) without overflow: z + ln(1 + e^-z) for z > 0.
        for (int64_t i = 0; i < n; ++i) {
          const C z = b * ToCompute(in[i]);
          out[i] = FromCompute<T>(a * (z > 0 ? z + std::log1p(std::exp(-z)) : std::log1p(std::exp(z))));
        }
        return;
      case ScaleOp::kScaledTanh:
        for (int64_t i = 0; i < n; ++i) out[i] = FromCompute<T>(a * std::tanh(b * ToCompute(in[i])));
        return;
    }
  }

  ScaleOp op_ = ScaleOp::kAffine;
  float alpha_ = 1.0f;
  float beta_ = 0.0f;  // Scale: 0, so every op but ImageScaler adds beta_
  std::vector<float> bias_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterScaleOps(KernelRegistry& registry) {
  const std::pair<const char*, ScaleOp> ops[] = {{"Affine", ScaleOp::kAffine},
                                                 {"Scale", ScaleOp::kScale},
                                                 {"ImageScaler", ScaleOp::kImageScaler},
                                                 {"ParametricSoftplus", ScaleOp::kParametricSoftplus},
                                                 {"ScaledTanh", ScaleOp::kScaledTanh}};
  for (const auto& [name, op] : ops) {
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, name, 1, kLastLegacyOpset, Make<ScaleOpKernel>(op)));
  }
  return Status::Ok();
}

}  // namespace legacy
}  // namespace onnxflow
