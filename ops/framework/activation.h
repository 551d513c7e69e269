// The one activation vocabulary: which activation functions the runtime computes (ActOp), the
// parameters they take (ActParams), and the ONNX ops they come from with the attribute that fills
// each parameter and its ONNX default (LeakyRelu's alpha 0.01, HardSigmoid's 0.2 and 0.5, ...),
// written once here. The standalone kernels (ops/activation), the elementwise chain, the fused
// epilogues (ops/math/fused_activation.h), the RNNs and the load-time passes all read this table.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace onnxflow {

enum class ActOp : int {
  kRelu,
  kLeakyRelu,
  kSigmoid,
  kHardSigmoid,
  kHardSwish,
  kTanh,
  kElu,
  kSelu,
  kCelu,
  kGelu,
  kGeluTanh,
  kMish,
  kSoftplus,
  kSoftsign,
  kThresholdedRelu,
  kShrink,
  kSwish,
  kClip,
};

// The attributes an activation reads. Which field means what, per op:
//   LeakyRelu/Elu/Celu/ThresholdedRelu/Swish: alpha;  HardSigmoid: alpha, beta;
//   Selu: alpha, gamma;  Shrink: alpha = lambd, beta = bias;  Clip: alpha = min, beta = max.
struct ActParams {
  float alpha = 0.0f;
  float beta = 0.0f;
  float gamma = 0.0f;
};

// One ONNX activation op (default domain): the function it computes, the first opset that has it,
// and the attribute read into each ActParams field with its ONNX default (attribute null: the
// field is not an attribute of this op).
struct ActivationOpDef {
  struct Param {
    const char* attribute;
    float fallback;
  };
  const char* op_type;
  ActOp op;
  int since;
  Param alpha, beta, gamma;
};

namespace activation_internal {

inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr ActivationOpDef::Param kNo{nullptr, 0.0f};

// Clip's bounds are attributes before opset 11 and inputs from then on; absent, they bound nothing.
// Gelu is kGelu here; its approximate="tanh" form is kGeluTanh (the reader of the attribute picks).
inline constexpr ActivationOpDef kOps[] = {
    {"Relu", ActOp::kRelu, 1, kNo, kNo, kNo},
    {"LeakyRelu", ActOp::kLeakyRelu, 1, {"alpha", 0.01f}, kNo, kNo},
    {"Sigmoid", ActOp::kSigmoid, 1, kNo, kNo, kNo},
    {"HardSigmoid", ActOp::kHardSigmoid, 1, {"alpha", 0.2f}, {"beta", 0.5f}, kNo},
    {"HardSwish", ActOp::kHardSwish, 14, kNo, kNo, kNo},
    {"Tanh", ActOp::kTanh, 1, kNo, kNo, kNo},
    {"Elu", ActOp::kElu, 1, {"alpha", 1.0f}, kNo, kNo},
    {"Selu", ActOp::kSelu, 1, {"alpha", 1.67326319217681884765625f}, kNo, {"gamma", 1.05070102214813232421875f}},
    {"Celu", ActOp::kCelu, 12, {"alpha", 1.0f}, kNo, kNo},
    {"Gelu", ActOp::kGelu, 20, kNo, kNo, kNo},
    {"Mish", ActOp::kMish, 18, kNo, kNo, kNo},
    {"Softplus", ActOp::kSoftplus, 1, kNo, kNo, kNo},
    {"Softsign", ActOp::kSoftsign, 1, kNo, kNo, kNo},
    {"ThresholdedRelu", ActOp::kThresholdedRelu, 10, {"alpha", 1.0f}, kNo, kNo},
    {"Shrink", ActOp::kShrink, 9, {"lambd", 0.5f}, {"bias", 0.0f}, kNo},
    {"Swish", ActOp::kSwish, 24, {"alpha", 1.0f}, kNo, kNo},
    {"Clip", ActOp::kClip, 1, {"min", -kInf}, {"max", kInf}, kNo},
};

}  // namespace activation_internal

// Every ONNX activation op of the vocabulary.
inline constexpr const auto& kActivationOps = activation_internal::kOps;

// The ONNX activation op named `op_type` (exact spelling), or null.
inline const ActivationOpDef* FindActivationOp(std::string_view op_type) {
  for (const ActivationOpDef& d : kActivationOps) {
    if (op_type == d.op_type) return &d;
  }
  return nullptr;
}

// The ONNX op computing `op` (Gelu for kGeluTanh), or null.
inline const ActivationOpDef* FindActivationOp(ActOp op) {
  if (op == ActOp::kGeluTanh) op = ActOp::kGelu;
  for (const ActivationOpDef& d : kActivationOps) {
    if (d.op == op) return &d;
  }
  return nullptr;
}

// The parameters of `def` read through get(attribute, fallback) -> float, each missing one its ONNX
// default.
template <class GetFloat>
ActParams ReadActParams(const ActivationOpDef& def, const GetFloat& get) {
  ActParams p;
  if (def.alpha.attribute != nullptr) p.alpha = get(def.alpha.attribute, def.alpha.fallback);
  if (def.beta.attribute != nullptr) p.beta = get(def.beta.attribute, def.beta.fallback);
  if (def.gamma.attribute != nullptr) p.gamma = get(def.gamma.attribute, def.gamma.fallback);
  return p;
}

// The ONNX defaults of `op`'s parameters (zeros where it takes none).
inline ActParams DefaultActParams(ActOp op) {
  const ActivationOpDef* def = FindActivationOp(op);
  if (def == nullptr) return {};
  return ReadActParams(*def, [](const char*, float fallback) { return fallback; });
}

}  // namespace onnxflow
