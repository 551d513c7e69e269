// com.microsoft MoE (version 1): a mixture-of-experts feed-forward layer with float (or float16)
// experts, as ONNX Runtime 1.30's CPU kernel computes it.
//
// Inputs: input [rows, hidden] or [batch, seq, hidden] T; router_probs [rows, E] T (logits);
// fc1_experts_weights [E, fc1, hidden] T (fc1 = inter, or 2 * inter for SwiGLU), fc1_experts_bias
// [E, fc1] (optional), fc2_experts_weights [E, hidden, inter], fc2_experts_bias [E, hidden]
// (optional). T is float or float16 (computed in float: the float16 weights widened once at load).
// Routing: routing.h. Each expert computes fc2(act(fc1(x))) (experts.h).
//
// Refused, as ONNX Runtime's CPU kernel refuses them: fc3_experts_weights / fc3_experts_bias (the
// gated fc3), SwiGLU not interleaved (swiglu_fusion != 1). Refused here: the legacy weight shapes
// ([E, hidden, fc1] and [E, inter, hidden]), which ONNX Runtime reads as raw memory of the current
// layout. ONNX Runtime 1.30's float16 MoE on CPU (MLAS' half GEMM) returns zeros or wrong values on
// machines without half-precision arithmetic; onnxflow's float16 MoE is checked against
// hand-computed values instead.
#include <memory>
#include <string>

#include "ops/framework/domains.h"
#include "ops/math/float_view.h"
#include "ops/moe/layer_spec.h"
#include "ops/moe/register.h"
#include "ops/moe/routing.h"

namespace onnxflow {
namespace moe {
namespace {

bool IsFloatOrHalf(DataType t) { return t == DataType::kFloat || t == DataType::kFloat16; }

Status BuildLayer(const Tensor& w1, const Tensor* b1, const Tensor& w2, const Tensor* b2,
                  const ActivationParams& act, ExpertLayer* layer) {
  if (!IsFloatOrHalf(w1.dtype()) || w1.rank() != 3) {
    return InvalidArgument("input 'fc1_experts_weights' must be float or float16 [E, fc1, hidden], got " + Describe(w1));
  }
  if (w2.dtype() != w1.dtype() || w2.rank() != 3 || w2.dim(0) != w1.dim(0)) {
    return InvalidArgument("input 'fc2_experts_weights' must be " + std::string(DataTypeName(w1.dtype())) + " [" +
                           std::to_string(w1.dim(0)) + ", hidden, inter], got " + Describe(w2));
  }
  const int64_t experts = w1.dim(0), hidden = w2.dim(1), inter = w2.dim(2);
  const int64_t n1 = act.type == Activation::kSwiGlu ? 2 * inter : inter;
  if (w1.dim(1) != n1 || w1.dim(2) != hidden) {
    if (w1.dim(1) == hidden && w1.dim(2) == n1) {
      return Unimplemented("MoE with the legacy weight layout fc1_experts_weights [E, hidden, inter]");
    }
    return InvalidArgument("input 'fc1_experts_weights' must be [" + std::to_string(experts) + ", " +
                           std::to_string(n1) + ", " + std::to_string(hidden) + "] for fc2_experts_weights " +
                           ShapeToString(w2.shape()) + ", got " + Describe(w1));
  }
  if (experts < 1 || hidden < 1 || inter < 1) {
    return InvalidArgument("input 'fc2_experts_weights' has an empty dimension: " + Describe(w2));
  }
  ONNXFLOW_RETURN_IF_ERROR(ReadBias(b1, "fc1_experts_bias", w1.dtype(), experts, n1, &layer->bias1));
  ONNXFLOW_RETURN_IF_ERROR(ReadBias(b2, "fc2_experts_bias", w1.dtype(), experts, hidden, &layer->bias2));
  const FloatIn f1(w1), f2(w2);
  layer->fc1 = std::make_shared<FloatExperts>(f1.data, experts, n1, hidden);
  layer->fc2 = std::make_shared<FloatExperts>(f2.data, experts, hidden, inter);
  layer->act = act;
  return Status::Ok();
}

class MoEKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<MoEKernel>(new MoEKernel());
    ONNXFLOW_ASSIGN_OR_RETURN(k->attrs_, LayerAttributes::Parse(info, "MoE"));
    if (info.has_input(6) || info.has_input(7)) {
      return Unimplemented("MoE with fc3_experts_weights / fc3_experts_bias (the gated fc3; ONNX Runtime's CPU "
                           "kernel refuses it too)");
    }
    if (!info.has_input(2) || !info.has_input(4)) {
      return InvalidArgument("MoE needs inputs 'fc1_experts_weights' and 'fc2_experts_weights'");
    }
    const DataType t = info.input_type(0);
    if (t != DataType::kUndefined && !IsFloatOrHalf(t)) {
      return InvalidArgument(std::string("MoE: input 'input' must be float or float16, got ") + DataTypeName(t));
    }
    const Tensor* w1 = info.constant_input(2);
    const Tensor* w2 = info.constant_input(4);
    const bool biases_constant = (!info.has_input(3) || info.constant_input(3) != nullptr) &&
                                 (!info.has_input(5) || info.constant_input(5) != nullptr);
    if (w1 != nullptr && w2 != nullptr && biases_constant) {
      auto layer = std::make_shared<ExpertLayer>();
      ONNXFLOW_RETURN_IF_ERROR(
          BuildLayer(*w1, info.constant_input(3), *w2, info.constant_input(5), k->attrs_.act, layer.get()));
      k->layer_ = std::move(layer);
      k->weight_type_ = w1->dtype();
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  bool ReadsAtRun(int input) const override { return layer_ == nullptr || input < 2; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* input, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* router, ctx.RequireTensor(1));
    const ExpertLayer* layer = layer_.get();
    DataType weight_type = weight_type_;
    ExpertLayer run_layer;
    if (layer == nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w1, ctx.RequireTensor(2));
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w2, ctx.RequireTensor(4));
      ONNXFLOW_RETURN_IF_ERROR(BuildLayer(*w1, ctx.input_tensor(3), *w2, ctx.input_tensor(5), attrs_.act, &run_layer));
      layer = &run_layer;
      weight_type = w1->dtype();
    }
    if (input->dtype() != weight_type) {
      return InvalidArgument("input 'input' must be of the weights' type " + std::string(DataTypeName(weight_type)) +
                             ", got " + Describe(*input));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(RunDims d,
                              CheckActivations(*input, *router, layer->fc2->n(), layer->fc1->experts(), attrs_.k));
    return RouteAndRunExperts(ctx, *layer, *input, *router, nullptr, Routing::kSoftmaxAll, d, attrs_);
  }

 private:
  MoEKernel() = default;
  LayerAttributes attrs_;
  std::shared_ptr<const ExpertLayer> layer_;  // null when a weight or bias is not a constant
  DataType weight_type_ = DataType::kUndefined;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMoE(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "MoE", 1, kOpenEnded, Make<MoEKernel>());
}

}  // namespace moe
}  // namespace onnxflow
