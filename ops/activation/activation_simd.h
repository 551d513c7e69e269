// The activation functions as float32 array functions (Highway, dynamic dispatch) and as a scalar
// reference for every other type (and for the tests, which sweep the SIMD path against it).
#pragma once

#include <cmath>
#include <cstdint>

#include "ops/activation/activation_functions.h"
#include "ops/framework/activation.h"  // ActOp, ActParams

namespace onnxflow {

// y[i] = op(x[i]) for n floats, vectorized. y may be x (in place), so a fused epilogue (Conv or
// Gemm followed by an activation) can run it over its own output.
void ActivationFloat(ActOp op, const ActParams& p, const float* x, float* y, int64_t n);

// y[i] = a[i] * sigmoid(alpha * a[i]) * b[i] (SwiGLU), vectorized.
void SwiGluFloat(float alpha, const float* a, const float* b, float* y, int64_t n);

// y[i] = x[i] < 0 ? x[i] * slope[i] : x[i] (PRelu), vectorized; x (slope) repeats x[0] (slope[0])
// when x_bcast (slope_bcast): a per-channel slope is one value over each channel's plane. y may be x.
void PReluFloat(const float* x, bool x_bcast, const float* slope, bool slope_bcast, float* y, int64_t n);

// The scalar definition of each activation in compute type C (float or double).
template <typename C>
C ActivationScalar(ActOp op, const ActParams& p, C x) {
  const C alpha = static_cast<C>(p.alpha), beta = static_cast<C>(p.beta), gamma = static_cast<C>(p.gamma);
  switch (op) {
    case ActOp::kRelu:
      return activation::Relu(x);
    case ActOp::kLeakyRelu:
      return activation::LeakyRelu(x, alpha);
    case ActOp::kSigmoid:
      return activation::Sigmoid(x);
    case ActOp::kHardSigmoid:
      return activation::HardSigmoid(x, alpha, beta);
    case ActOp::kHardSwish:
      return x * activation::HardSigmoid(x, C(1) / C(6), C(0.5));
    case ActOp::kTanh:
      return activation::Tanh(x);
    case ActOp::kElu:
      return x < C(0) ? alpha * std::expm1(x) : x;
    case ActOp::kSelu:
      return x <= C(0) ? gamma * alpha * std::expm1(x) : gamma * x;
    case ActOp::kCelu:
      return x < C(0) ? alpha * std::expm1(x / alpha) : x;
    case ActOp::kGelu:
      return C(0.5) * x * (C(1) + std::erf(x * C(0.70710678118654752440)));
    case ActOp::kGeluTanh: {
      const C inner = C(0.79788456080286535588) * (x + C(0.044715) * x * x * x);
      return C(0.5) * x * (C(1) + std::tanh(inner));
    }
    case ActOp::kMish:
    case ActOp::kSoftplus: {
      // log(1 + e^x) = max(x, 0) + log1p(e^-|x|), which never overflows.
      const C sp = (x > C(0) ? x : C(0)) + std::log1p(std::exp(-std::fabs(x)));
      if (x != x) return x;
      return op == ActOp::kSoftplus ? sp : x * std::tanh(sp);
    }
    case ActOp::kSoftsign:
      return x / (C(1) + std::fabs(x));
    // The spec's "otherwise 0" covers NaN for these two.
    case ActOp::kThresholdedRelu:
      return x > alpha ? x : C(0);
    case ActOp::kShrink:
      return x < -alpha ? x + beta : (x > alpha ? x - beta : C(0));
    case ActOp::kSwish:
      return x * activation::Sigmoid(alpha * x);
    case ActOp::kClip:
      return activation::Clip(x, alpha, beta);
  }
  return x;
}

}  // namespace onnxflow
