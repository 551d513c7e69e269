// The kernel function K(a, b) that SVMClassifier and SVMRegressor (ai.onnx.ml) evaluate between a
// row of X and a support vector, following libsvm: LINEAR a.b, POLY (gamma a.b + coef0)^degree,
// RBF exp(-gamma |a-b|^2), SIGMOID tanh(gamma a.b + coef0).
#pragma once

#include <cmath>
#include <cstdint>

#include "include/onnxflow/status.h"
#include "ops/framework/kernel_info.h"

namespace onnxflow {

class SvmKernel {
 public:
  enum class Type { kLinear, kPoly, kRbf, kSigmoid };

  // From the attributes kernel_type (default LINEAR) and kernel_params (gamma, coef0, degree).
  static Result<SvmKernel> FromAttributes(const KernelInfo& info);

  SvmKernel() = default;
  SvmKernel(Type type, double gamma, double coef0, int degree)
      : type_(type), gamma_(gamma), coef0_(coef0), degree_(degree) {}

  // The plain dot product, which the models without support vectors (liblinear form) use
  // whatever kernel_type says.
  static SvmKernel Linear() { return SvmKernel(); }

  // K(a, b) over n features. Inline: called once per support vector and row.
  double operator()(const double* a, const double* b, int64_t n) const {
    double s = 0;
    if (type_ == Type::kRbf) {
      for (int64_t i = 0; i < n; ++i) s += (a[i] - b[i]) * (a[i] - b[i]);
      return std::exp(-gamma_ * s);
    }
    for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
    switch (type_) {
      case Type::kPoly:
        return std::pow(gamma_ * s + coef0_, degree_);
      case Type::kSigmoid:
        return std::tanh(gamma_ * s + coef0_);
      default:
        return s;
    }
  }

 private:
  Type type_ = Type::kLinear;
  double gamma_ = 0;
  double coef0_ = 0;
  int degree_ = 0;
};

}  // namespace onnxflow
