// CausalConvWithState (27): depthwise causal 1-D convolution over [batch, channels, length] that
// carries the last k-1 positions between calls, with an optional fused SiLU ("silu"/"swish").
#include <cmath>

#include "ops/math/float_view.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

class CausalConvKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const std::string act = info.GetString("activation", "none");
    if (act != "none" && act != "silu" && act != "swish" && !act.empty()) {
      return InvalidArgument("CausalConvWithState: unknown activation '" + act + "'");
    }
    return std::unique_ptr<OpKernel>(new CausalConvKernel(act == "silu" || act == "swish"));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
    const Tensor* bias = ctx.input_tensor(2);
    const Tensor* past = ctx.input_tensor(3);
    if (!IsFloatLike(x->dtype()) || w->dtype() != x->dtype() || (bias && bias->dtype() != x->dtype()) ||
        (past && past->dtype() != x->dtype())) {
      return InvalidArgument("CausalConvWithState: inputs must share one float type");
    }
    if (x->rank() != 3 || w->rank() != 3) return InvalidArgument("CausalConvWithState: input and weight must be rank 3");
    const int64_t batch = x->dim(0), channels = x->dim(1), length = x->dim(2), k = w->dim(2);
    if (w->dim(0) != channels || w->dim(1) != 1 || k < 1) {
      return InvalidArgument("CausalConvWithState: weight " + ShapeToString(w->shape()) + " must be [channels, 1, k]");
    }
    if (bias != nullptr && bias->size() != channels) return InvalidArgument("CausalConvWithState: bias must be [channels]");
    if (past != nullptr && past->shape() != Shape{batch, channels, k - 1}) {
      return InvalidArgument("CausalConvWithState: past_state " + ShapeToString(past->shape()) + " must be [" +
                             std::to_string(batch) + "," + std::to_string(channels) + "," + std::to_string(k - 1) + "]");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), x->shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * state, ctx.Allocate(1, x->dtype(), {batch, channels, k - 1}));
    FloatScratch xs, ws, bs, ps, ys, ss;
    const float* xd = FloatData(*x, xs);
    const float* wd = FloatData(*w, ws);
    const float* bd = bias != nullptr ? FloatData(*bias, bs) : nullptr;
    const float* pd = past != nullptr ? FloatData(*past, ps) : nullptr;
    float* yd = FloatOutput(y, ys);
    float* sd = FloatOutput(state, ss);
    const int64_t padded = k - 1 + length;
    std::vector<float> seq(static_cast<size_t>(padded));
    for (int64_t b = 0; b < batch; ++b) {
      for (int64_t c = 0; c < channels; ++c) {
        const int64_t bc = b * channels + c;
        for (int64_t i = 0; i < k - 1; ++i) seq[i] = pd != nullptr ? pd[bc * (k - 1) + i] : 0.0f;
        for (int64_t t = 0; t < length; ++t) seq[k - 1 + t] = xd[bc * length + t];
        const float* wc = wd + c * k;
        for (int64_t t = 0; t < length; ++t) {
          float acc = bd != nullptr ? bd[c] : 0.0f;
          for (int64_t j = 0; j < k; ++j) acc += wc[j] * seq[t + j];
          if (silu_) acc = acc / (1.0f + std::exp(-acc));
          yd[bc * length + t] = acc;
        }
        for (int64_t i = 0; i < k - 1; ++i) sd[bc * (k - 1) + i] = seq[padded - (k - 1) + i];
      }
    }
    StoreFloats(yd, y->size(), y);
    StoreFloats(sd, state->size(), state);
    return Status::Ok();
  }

 private:
  explicit CausalConvKernel(bool silu) : silu_(silu) {}
  bool silu_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterCausalConvKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "CausalConvWithState", 27, kOpenEnded, Make<CausalConvKernel>());
}

}  // namespace onnxflow
