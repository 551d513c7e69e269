// com.onnxflow GatedActivation: Y = act(P[..., :F]) * P[..., F:], P of last dimension 2F, Y of F.
// A gated feed-forward block (LLaMA's SwiGLU, T5 v1.1's and Gemma's GELU-tanh gate, GEGLU, Phi-3's
// split product) after graph/gated_ffn.cc merged its two products x Wg and x Wu into one product of
// [Wg | Wu]: this op reads that product's two halves and writes only the gated [M, F], in one
// vectorized pass per row instead of the activation's and the Mul's passes.
#pragma once

#include <cstdint>
#include <string>

#include "ops/framework/activation.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/node_attributes.h"

namespace onnxflow {

// The gate's activation, carried as `activation` (the ONNX op's name; Gelu for both forms),
// `approximate` ("tanh" for GELU's tanh form, as ONNX's Gelu spells it) and `activation_alpha`
// (Swish's alpha: x * sigmoid(alpha x)).
struct GatedActivationSpec {
  ActOp op = ActOp::kSwish;
  float alpha = 1.0f;  // kSwish only

  // The gates GatedRowsFloat computes.
  static bool Supported(ActOp op) {
    return op == ActOp::kSwish || op == ActOp::kGelu || op == ActOp::kGeluTanh || op == ActOp::kSigmoid ||
           op == ActOp::kRelu || op == ActOp::kTanh;
  }

  void WriteTo(onnx::NodeProto& node) const {
    SetAttribute(node, "activation", std::string(FindActivationOp(op)->op_type));
    if (op == ActOp::kGeluTanh) SetAttribute(node, "approximate", std::string("tanh"));
    if (op == ActOp::kSwish) SetAttribute(node, "activation_alpha", alpha);
  }

  static Result<GatedActivationSpec> Parse(const KernelInfo& info) {
    const std::string name = info.GetString("activation", "");
    const ActivationOpDef* def = FindActivationOp(name);
    GatedActivationSpec spec;
    if (def == nullptr || !Supported(def->op)) {
      return InvalidArgument("GatedActivation: unknown gate activation '" + name + "'");
    }
    spec.op = def->op;
    const std::string approximate = info.GetString("approximate", "none");
    if (approximate == "tanh" && spec.op == ActOp::kGelu) {
      spec.op = ActOp::kGeluTanh;
    } else if (approximate != "none") {
      return InvalidArgument("GatedActivation: approximate='" + approximate + "' for activation '" + name + "'");
    }
    if (spec.op == ActOp::kSwish) spec.alpha = info.GetFloat("activation_alpha", 1.0f);
    return spec;
  }
};

// y[j] = act(gate[j]) * up[j] for j < n (vectorized, Highway dynamic dispatch).
void GatedRowsFloat(const GatedActivationSpec& spec, const float* gate, const float* up, float* y, int64_t n);

}  // namespace onnxflow
