#include "ops/ml/post_transform.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace onnxflow {

Result<PostTransform> PostTransformFromInt(int64_t value) {
  if (value < 0 || value > 4) return InvalidArgument("post_transform must be in [0, 4], got " + std::to_string(value));
  return static_cast<PostTransform>(value);
}

Result<PostTransform> PostTransformFromString(const std::string& value) {
  if (value == "NONE") return PostTransform::kNone;
  if (value == "SOFTMAX") return PostTransform::kSoftmax;
  if (value == "LOGISTIC") return PostTransform::kLogistic;
  if (value == "SOFTMAX_ZERO") return PostTransform::kSoftmaxZero;
  if (value == "PROBIT") return PostTransform::kProbit;
  return InvalidArgument("post_transform must be NONE, SOFTMAX, LOGISTIC, SOFTMAX_ZERO or PROBIT, got '" + value + "'");
}

double ErfInv(double x) {
  if (std::isnan(x) || x < -1 || x > 1) return std::numeric_limits<double>::quiet_NaN();
  if (x == 1) return std::numeric_limits<double>::infinity();
  if (x == -1) return -std::numeric_limits<double>::infinity();
  // Giles' single-precision approximation ("Approximating the erfinv function", 2010) as the
  // start, then Newton steps on erf(y) - x, whose derivative is 2/sqrt(pi) * exp(-y^2).
  const double w = -std::log((1.0 - x) * (1.0 + x));
  double y;
  if (w < 5.0) {
    const double t = w - 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * t; p = -3.5233877e-06 + p * t; p = -4.39150654e-06 + p * t;
    p = 0.00021858087 + p * t; p = -0.00125372503 + p * t; p = -0.00417768164 + p * t;
    p = 0.246640727 + p * t; p = 1.50140941 + p * t;
    y = p * x;
  } else {
    const double t = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * t; p = 0.00134934322 + p * t; p = -0.00367342844 + p * t;
    p = 0.00573950773 + p * t; p = -0.0076224613 + p * t; p = 0.00943887047 + p * t;
    p = 1.00167406 + p * t; p = 2.83297682 + p * t;
    y = p * x;
  }
  const double two_over_sqrt_pi = 1.1283791670955126;
  for (int i = 0; i < 2; ++i) {
    const double slope = two_over_sqrt_pi * std::exp(-y * y);
    if (slope == 0) break;
    y -= (std::erf(y) - x) / slope;
  }
  return y;
}

void ApplyPostTransform(PostTransform transform, double* s, int64_t n) {
  switch (transform) {
    case PostTransform::kNone:
      return;
    case PostTransform::kLogistic:
      for (int64_t i = 0; i < n; ++i) {
        // exp of a non-positive number cannot overflow
        const double e = std::exp(-std::abs(s[i]));
        s[i] = s[i] >= 0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
      }
      return;
    case PostTransform::kSoftmax: {
      if (n == 0) return;
      const double top = *std::max_element(s, s + n);
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) sum += (s[i] = std::exp(s[i] - top));
      for (int64_t i = 0; i < n; ++i) s[i] /= sum;
      return;
    }
    case PostTransform::kSoftmaxZero: {
      // Softmax over the non-zero scores; zero scores stay zero.
      if (n == 0) return;
      const double top = *std::max_element(s, s + n);
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (s[i] != 0) sum += (s[i] = std::exp(s[i] - top));
      }
      if (sum > 0) {
        for (int64_t i = 0; i < n; ++i) s[i] /= sum;
      }
      return;
    }
    case PostTransform::kProbit:
      for (int64_t i = 0; i < n; ++i) s[i] = std::sqrt(2.0) * ErfInv(2.0 * s[i] - 1.0);
      return;
  }
}

}  // namespace onnxflow
