// Scalar activation functions, header-only and dependency-free (<cmath> only), so a fused
// epilogue elsewhere (Conv + Relu, Gemm + Sigmoid ...) computes exactly what the standalone
// activation kernels compute. NaN passes through every function unchanged.
#pragma once

#include <cmath>

namespace onnxflow {
namespace activation {

template <typename T>
inline T Relu(T x) {
  return x < T(0) ? T(0) : x;
}

// LeakyRelu: alpha * x for x < 0 (ONNX default alpha = 0.01).
template <typename T>
inline T LeakyRelu(T x, T alpha) {
  return x < T(0) ? alpha * x : x;
}

// 1 / (1 + e^-x), written so that neither branch overflows.
template <typename T>
inline T Sigmoid(T x) {
  if (x >= T(0)) return T(1) / (T(1) + std::exp(-x));
  const T e = std::exp(x);
  return e / (T(1) + e);
}

// HardSigmoid: max(0, min(1, alpha * x + beta)) (ONNX defaults alpha = 0.2, beta = 0.5).
template <typename T>
inline T HardSigmoid(T x, T alpha, T beta) {
  const T v = alpha * x + beta;
  if (v != v) return v;
  return v < T(0) ? T(0) : (v > T(1) ? T(1) : v);
}

template <typename T>
inline T Tanh(T x) {
  return std::tanh(x);
}

// Clip: min(max(x, lo), hi); when lo > hi every value becomes hi (numpy's order).
template <typename T>
inline T Clip(T x, T lo, T hi) {
  if (x != x) return x;
  const T v = x < lo ? lo : x;
  return v > hi ? hi : v;
}

}  // namespace activation
}  // namespace onnxflow
