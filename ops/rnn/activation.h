// The activation functions RNN, GRU and LSTM accept by name in their `activations` attribute,
// with the alpha/beta each takes from activation_alpha / activation_beta.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "ops/framework/kernel_info.h"

namespace onnxflow {
namespace rnn {

enum class ActivationKind {
  kRelu, kTanh, kSigmoid, kAffine, kLeakyRelu, kThresholdedRelu, kScaledTanh, kHardSigmoid, kElu, kSoftsign, kSoftplus,
};

struct Activation {
  ActivationKind kind = ActivationKind::kTanh;
  float alpha = 0.0f;
  float beta = 0.0f;

  template <typename C>
  C operator()(C x) const {
    const C a = static_cast<C>(alpha), b = static_cast<C>(beta);
    switch (kind) {
      case ActivationKind::kRelu: return x > 0 ? x : C(0);
      case ActivationKind::kTanh: return std::tanh(x);
      case ActivationKind::kSigmoid: return Sigmoid(x);
      case ActivationKind::kAffine: return a * x + b;
      case ActivationKind::kLeakyRelu: return x >= 0 ? x : a * x;
      case ActivationKind::kThresholdedRelu: return x >= a ? x : C(0);
      case ActivationKind::kScaledTanh: return a * std::tanh(b * x);
      case ActivationKind::kHardSigmoid: return std::min(std::max(a * x + b, C(0)), C(1));
      case ActivationKind::kElu: return x >= 0 ? x : a * (std::exp(x) - C(1));
      case ActivationKind::kSoftsign: return x / (C(1) + std::abs(x));
      case ActivationKind::kSoftplus: return x > C(30) ? x : std::log1p(std::exp(x));
    }
    return x;
  }

  // exp of a non-positive number only, so large |x| neither overflows nor loses the tail.
  template <typename C>
  static C Sigmoid(C x) {
    if (x >= 0) return C(1) / (C(1) + std::exp(-x));
    const C e = std::exp(x);
    return e / (C(1) + e);
  }
};

// x[i] = a(x[i]) for n floats: vectorized (ActivationFloat) for every function the ONNX activation
// ops share, the scalar operator() for Affine and ScaledTanh. A cell's std::tanh and sigmoid were a
// third of a hidden-512 LSTM's time.
void ApplyInPlace(const Activation& a, float* x, int64_t n);

// The same in any compute type: double stays scalar.
template <typename C>
void ApplyInPlace(const Activation& a, C* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] = a(x[i]);
}

// The activations of every direction, `per_direction` each: the `activations` attribute (names
// are case-insensitive; one direction's list is reused for both directions of a bidirectional
// node) or `defaults`. Alphas and betas are consumed in order by the functions that take them;
// a function past the end of the list gets the ONNX operator's default.
Result<std::vector<Activation>> ParseActivations(const KernelInfo& info, const std::vector<ActivationKind>& defaults,
                                                 int num_directions);

}  // namespace rnn
}  // namespace onnxflow
