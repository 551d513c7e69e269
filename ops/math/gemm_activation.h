// The activations an epilogue computes (the GEMM's, the convolutions', the blocked kernels'): a
// subset of the one activation vocabulary (ops/framework/activation.h), named by the vocabulary's
// own ActOp values, plus kNone. The attributes that carry an epilogue through a model, and the
// ONNX defaults of its parameters, are FusedActivationSpec's (fused_activation.h).
#pragma once

#include <cstdint>

#include "ops/framework/activation.h"

namespace onnxflow {

// kHardSwish: x * HardSigmoid(x) of alpha 1/6, beta 1/2 (MobileNetV3's activation, after most of
// its convolutions).
// kSwish: x * sigmoid(x) (SiLU), two ONNX nodes (Sigmoid and a Mul by the input) that
// graph/fusion.cc folds into one epilogue.
// kGelu is the erf form, 0.5 x (1 + erf(x / sqrt 2)), with the vectorized erf of the plain export's
// written-out GELU (graph/fusion.cc FuseGelu); ONNX's Gelu op keeps its own kernel.
enum class Activation : int {
  kNone = -1,
  kRelu = static_cast<int>(ActOp::kRelu),
  kLeakyRelu = static_cast<int>(ActOp::kLeakyRelu),
  kClip = static_cast<int>(ActOp::kClip),
  kSigmoid = static_cast<int>(ActOp::kSigmoid),
  kTanh = static_cast<int>(ActOp::kTanh),
  kHardSigmoid = static_cast<int>(ActOp::kHardSigmoid),
  kHardSwish = static_cast<int>(ActOp::kHardSwish),
  kSwish = static_cast<int>(ActOp::kSwish),
  kGelu = static_cast<int>(ActOp::kGelu),
};

// The vocabulary's op an epilogue kind computes (kNone has none: callers test it first).
inline ActOp ToActOp(Activation kind) { return static_cast<ActOp>(static_cast<int>(kind)); }

// alpha and beta mean what ActParams says they mean for the op (Clip: min and max).
struct ActivationSpec {
  Activation kind = Activation::kNone;
  float alpha = 0.0f;  // LeakyRelu slope; Clip min; HardSigmoid alpha
  float beta = 0.0f;   // Clip max; HardSigmoid beta
};

// Applies `spec` to n floats in place (SIMD).
void ApplyActivation(const ActivationSpec& spec, float* data, int64_t n);
// data = act(data + addend) over n floats, for epilogues that run after the GEMM (a residual
// addend; null adds nothing).
void AddThenActivate(const ActivationSpec& spec, const float* addend, float* data, int64_t n);
// The same on one value (scalar reference, for tests and odd paths).
float ActivationScalar(const ActivationSpec& spec, float x);

}  // namespace onnxflow
