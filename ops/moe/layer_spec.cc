#include "ops/moe/layer_spec.h"

#include <limits>
#include <optional>

#include "ops/framework/shape.h"
#include "ops/math/float_view.h"

namespace onnxflow {
namespace moe {

std::string Describe(const Tensor& t) { return std::string(DataTypeName(t.dtype())) + " " + ShapeToString(t.shape()); }

Result<LayerAttributes> LayerAttributes::Parse(const KernelInfo& info, const std::string& op) {
  LayerAttributes a;
  ONNXFLOW_ASSIGN_OR_RETURN(a.k, info.RequireInt("k"));
  if (a.k < 1) return InvalidArgument(op + ": attribute k must be at least 1, got " + std::to_string(a.k));
  const std::string act = info.GetString("activation_type", "relu");
  if (act == "relu") {
    a.act.type = Activation::kRelu;
  } else if (act == "gelu") {
    a.act.type = Activation::kGelu;
  } else if (act == "silu") {
    a.act.type = Activation::kSilu;
  } else if (act == "identity") {
    a.act.type = Activation::kIdentity;
  } else if (act == "swiglu") {
    a.act.type = Activation::kSwiGlu;
  } else {
    return InvalidArgument(op + ": attribute activation_type '" + act +
                           "' is not one of relu, gelu, silu, identity, swiglu");
  }
  a.normalize = info.GetInt("normalize_routing_weights", 0) == 1;
  if (info.GetInt("use_sparse_mixer", 0) == 1 && a.k != 2) {
    return InvalidArgument(op + ": attribute use_sparse_mixer needs k = 2, got k = " + std::to_string(a.k));
  }
  const int64_t fusion = info.GetInt("swiglu_fusion", 0);
  if (a.act.type == Activation::kSwiGlu && fusion != 1) {
    return Unimplemented(op + " with activation_type swiglu and swiglu_fusion = " + std::to_string(fusion) +
                         " (only 1, gate and linear interleaved in fc1, as ONNX Runtime's CPU kernels)");
  }
  a.act.alpha = info.GetFloat("activation_alpha", 1.f);
  a.act.beta = info.GetFloat("activation_beta", 0.f);
  a.act.limit = info.GetFloat("swiglu_limit", std::numeric_limits<float>::infinity());
  ONNXFLOW_RETURN_IF_ERROR(info.attribute_status());
  return a;
}

Result<RunDims> CheckActivations(const Tensor& input, const Tensor& router, int64_t hidden, int64_t experts,
                                 int64_t k) {
  if (input.dtype() != DataType::kFloat && input.dtype() != DataType::kFloat16) {
    return InvalidArgument("input 'input' must be float or float16, got " + Describe(input));
  }
  if ((input.rank() != 2 && input.rank() != 3) || input.dim(input.rank() - 1) != hidden) {
    return InvalidArgument("input 'input' must be [rows, " + std::to_string(hidden) + "] or [batch, seq, " +
                           std::to_string(hidden) + "] (hidden from the weights), got " + Describe(input));
  }
  RunDims d;
  d.hidden = hidden;
  d.experts = experts;
  d.tokens = input.size() / hidden;
  if (router.dtype() != input.dtype() || router.rank() != 2 || router.dim(0) != d.tokens || router.dim(1) != experts) {
    return InvalidArgument("input 'router_probs' must be " + std::string(DataTypeName(input.dtype())) + " [" +
                           std::to_string(d.tokens) + ", " + std::to_string(experts) + "], got " + Describe(router));
  }
  if (k > experts) {
    return InvalidArgument("attribute k = " + std::to_string(k) + " is more than the " + std::to_string(experts) +
                           " experts");
  }
  return d;
}

Status RouteAndRunExperts(KernelContext& ctx, const ExpertLayer& layer, const Tensor& input, const Tensor& router,
                          const Tensor* router_weights, Routing routing, const RunDims& d,
                          const LayerAttributes& attrs) {
  const FloatIn x(input), logits(router);
  std::optional<FloatIn> weights;
  if (router_weights != nullptr) weights.emplace(*router_weights);
  const std::vector<Route> routes = RouteTokens(routing, logits.data, weights ? weights->data : nullptr, d.tokens,
                                                d.experts, attrs.k, attrs.normalize);
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, input.dtype(), input.shape()));
  FloatOut out(y);
  ONNXFLOW_RETURN_IF_ERROR(RunExperts(ctx, layer, x.data, d.tokens, attrs.k, routes, out.data));
  out.Finish();
  return Status::Ok();
}

Status ReadBias(const Tensor* b, const char* name, DataType type, int64_t experts, int64_t n, std::vector<float>* out) {
  out->clear();
  if (b == nullptr) return Status::Ok();
  if (b->dtype() != type || b->rank() != 2 || b->dim(0) != experts || b->dim(1) != n) {
    return InvalidArgument(std::string("input '") + name + "' must be " + DataTypeName(type) + " [" +
                           std::to_string(experts) + ", " + std::to_string(n) + "], got " + Describe(*b));
  }
  const FloatIn f(*b);
  out->assign(f.data, f.data + b->size());
  return Status::Ok();
}

}  // namespace moe
}  // namespace onnxflow
