#include "ops/rnn/activation.h"

#include <algorithm>
#include <cctype>

#include "ops/activation/activation_simd.h"

namespace onnxflow {
namespace rnn {
namespace {

struct ActivationSpec {
  const char* name;  // lower case
  ActivationKind kind;
  bool takes_alpha, takes_beta;
  float default_alpha, default_beta;
};

constexpr ActivationSpec kSpecs[] = {
    {"relu", ActivationKind::kRelu, false, false, 0.0f, 0.0f},
    {"tanh", ActivationKind::kTanh, false, false, 0.0f, 0.0f},
    {"sigmoid", ActivationKind::kSigmoid, false, false, 0.0f, 0.0f},
    {"affine", ActivationKind::kAffine, true, true, 1.0f, 0.0f},
    {"leakyrelu", ActivationKind::kLeakyRelu, true, false, 0.01f, 0.0f},
    {"thresholdedrelu", ActivationKind::kThresholdedRelu, true, false, 1.0f, 0.0f},
    {"scaledtanh", ActivationKind::kScaledTanh, true, true, 1.0f, 1.0f},
    {"hardsigmoid", ActivationKind::kHardSigmoid, true, true, 0.2f, 0.5f},
    {"elu", ActivationKind::kElu, true, false, 1.0f, 0.0f},
    {"softsign", ActivationKind::kSoftsign, false, false, 0.0f, 0.0f},
    {"softplus", ActivationKind::kSoftplus, false, false, 0.0f, 0.0f},
};

const ActivationSpec* FindSpec(const std::string& name) {
  std::string lower = name;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  for (const ActivationSpec& s : kSpecs) {
    if (lower == s.name) return &s;
  }
  return nullptr;
}

const ActivationSpec* FindSpec(ActivationKind kind) {
  for (const ActivationSpec& s : kSpecs) {
    if (s.kind == kind) return &s;
  }
  return nullptr;
}

}  // namespace

Result<std::vector<Activation>> ParseActivations(const KernelInfo& info, const std::vector<ActivationKind>& defaults,
                                                 int num_directions) {
  const size_t per_direction = defaults.size();
  std::vector<const ActivationSpec*> specs;
  const std::vector<std::string> names = info.GetStrings("activations");
  if (names.empty()) {
    for (int d = 0; d < num_directions; ++d) {
      for (ActivationKind k : defaults) specs.push_back(FindSpec(k));
    }
  } else {
    if (names.size() != per_direction && names.size() != per_direction * num_directions) {
      return InvalidArgument("activations must list " + std::to_string(per_direction) + " functions per direction, got " +
                             std::to_string(names.size()));
    }
    for (const std::string& n : names) {
      const ActivationSpec* s = FindSpec(n);
      if (s == nullptr) return InvalidArgument("unknown activation function '" + n + "'");
      specs.push_back(s);
    }
    if (names.size() == per_direction && num_directions == 2) {
      for (size_t i = 0; i < per_direction; ++i) specs.push_back(specs[i]);
    }
  }
  const std::vector<float> alphas = info.GetFloats("activation_alpha");
  const std::vector<float> betas = info.GetFloats("activation_beta");
  size_t next_alpha = 0, next_beta = 0;
  std::vector<Activation> out;
  for (const ActivationSpec* s : specs) {
    Activation a;
    a.kind = s->kind;
    a.alpha = s->default_alpha;
    a.beta = s->default_beta;
    if (s->takes_alpha && next_alpha < alphas.size()) a.alpha = alphas[next_alpha++];
    if (s->takes_beta && next_beta < betas.size()) a.beta = betas[next_beta++];
    out.push_back(a);
  }
  return out;
}

void ApplyInPlace(const Activation& a, float* x, int64_t n) {
  ActParams p{a.alpha, a.beta};
  ActOp op;
  switch (a.kind) {
    case ActivationKind::kRelu: op = ActOp::kRelu; break;
    case ActivationKind::kTanh: op = ActOp::kTanh; break;
    case ActivationKind::kSigmoid: op = ActOp::kSigmoid; break;
    case ActivationKind::kLeakyRelu: op = ActOp::kLeakyRelu; break;
    case ActivationKind::kHardSigmoid: op = ActOp::kHardSigmoid; break;
    case ActivationKind::kElu: op = ActOp::kElu; break;
    case ActivationKind::kSoftsign: op = ActOp::kSoftsign; break;
    case ActivationKind::kSoftplus: op = ActOp::kSoftplus; break;
    default:
      for (int64_t i = 0; i < n; ++i) x[i] = a(x[i]);
      return;
  }
  ActivationFloat(op, p, x, x, n);
}

}  // namespace rnn
}  // namespace onnxflow
