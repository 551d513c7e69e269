// The epilogue activation of the fused and blocked kernels (FusedConv, FusedGemm, FusedMatMul,
// BlockedConv, BlockedDepthwiseConv, BlockedBatchNormalization: ops/framework/internal_ops.h),
// carried as the attributes `activation` (the ONNX op's name), `activation_alpha` and
// `activation_beta`. The names and the ONNX defaults come from the one activation vocabulary
// (ops/framework/activation.h); this spec is the only code that spells the attributes.
#pragma once

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/framework/activation.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/registry.h"  // kOnnxflowDomain
#include "ops/math/gemm_activation.h"

namespace onnxflow {

struct FusedActivationSpec {
  ActivationSpec activation;  // gemm_activation.h's epilogue; kNone: none

  // The epilogue computing ActOp `op` with parameters `p` (the vocabulary's meaning of alpha and
  // beta), when an epilogue can: Relu, LeakyRelu, Clip, Sigmoid, Tanh, HardSigmoid, HardSwish, Swish
  // of alpha 1 (x * sigmoid(x)), and Gelu (the erf form).
  static bool From(ActOp op, const ActParams& p, FusedActivationSpec* spec) {
    static constexpr Activation kEpilogues[] = {Activation::kRelu,        Activation::kLeakyRelu, Activation::kClip,
                                                Activation::kSigmoid,     Activation::kTanh,      Activation::kHardSigmoid,
                                                Activation::kHardSwish,   Activation::kSwish,     Activation::kGelu};
    for (const Activation kind : kEpilogues) {
      if (ToActOp(kind) != op || (op == ActOp::kSwish && p.alpha != 1.0f)) continue;
      spec->activation = {kind, TakesAlpha(kind) ? p.alpha : 0.0f, TakesBeta(kind) ? p.beta : 0.0f};
      return true;
    }
    return false;
  }

  void WriteTo(onnx::NodeProto& node) const {
    const Activation kind = activation.kind;
    if (kind == Activation::kNone) {
      for (const char* name : {"activation", "activation_alpha", "activation_beta"}) RemoveAttribute(node, name);
      return;
    }
    SetAttribute(node, "activation", std::string(FindActivationOp(ToActOp(kind))->op_type));
    if (TakesAlpha(kind)) SetAttribute(node, "activation_alpha", activation.alpha);
    if (TakesBeta(kind)) SetAttribute(node, "activation_beta", activation.beta);
  }

  // A missing alpha or beta is the ONNX default of the named op.
  static Result<FusedActivationSpec> Parse(const KernelInfo& info) {
    return Named(info.GetString("activation", ""), [&](const char* field, float fallback) {
      return info.GetFloat(field, fallback);
    });
  }

  // The epilogue of the ONNX activation op `name` ("" or "None": none), its parameters read through
  // get("activation_alpha" | "activation_beta", ONNX default) -> float.
  template <class GetFloat>
  static Result<FusedActivationSpec> Named(const std::string& name, const GetFloat& get) {
    FusedActivationSpec spec;
    if (name.empty() || name == "None" || name == "none") return spec;
    const ActivationOpDef* def = FindActivationOp(name);
    const ActParams p = def == nullptr ? ActParams{} : ReadActParams(*def, [&](const char* attribute, float fallback) {
      return get(attribute == def->alpha.attribute ? "activation_alpha" : "activation_beta", fallback);
    });
    // Swish's epilogue has no alpha: x * sigmoid(x) whatever one says.
    if (def == nullptr || !From(def->op, def->op == ActOp::kSwish ? ActParams{1.0f} : p, &spec)) {
      return InvalidArgument("unknown fused activation '" + name + "'");
    }
    return spec;
  }
  // ONNX Runtime's spelling of the same (com.microsoft FusedConv, saved at its extended level):
  // `activation`, and its parameters as one list `activation_params` in the op's order (LeakyRelu:
  // alpha; Clip: min, max; HardSigmoid: alpha, beta).
  static Result<FusedActivationSpec> FromOrtParams(const onnx::NodeProto& node) {
    std::string name;
    std::vector<float> params;
    for (const auto& a : node.attribute()) {
      if (a.name() == "activation") name = a.s();
      if (a.name() == "activation_params") params.assign(a.floats().begin(), a.floats().end());
    }
    // ONNX Runtime clips by comparing with each bound, which a NaN bound fails: that side is not
    // clipped (where the epilogue's min/max would make every output NaN).
    const bool clip = name == "Clip";
    return Named(name, [&](const char* field, float fallback) {
      const size_t k = std::string(field) == "activation_alpha" ? 0 : 1;
      const float v = k < params.size() ? params[k] : fallback;
      if (clip && std::isnan(v)) return k == 0 ? -std::numeric_limits<float>::infinity() : std::numeric_limits<float>::infinity();
      return v;
    });
  }
  // With the ONNX defaults (tests, and code that names an epilogue).
  static Result<FusedActivationSpec> Named(const std::string& name) {
    return Named(name, [](const char*, float fallback) { return fallback; });
  }

  static bool TakesAlpha(Activation kind) {
    return kind == Activation::kLeakyRelu || kind == Activation::kClip || kind == Activation::kHardSigmoid;
  }
  static bool TakesBeta(Activation kind) { return kind == Activation::kClip || kind == Activation::kHardSigmoid; }
};

inline Result<ActivationSpec> ParseFusedActivation(const KernelInfo& info) {
  ONNXFLOW_ASSIGN_OR_RETURN(FusedActivationSpec spec, FusedActivationSpec::Parse(info));
  return spec.activation;
}

}  // namespace onnxflow
