// Det (11, 22): determinants of the trailing M x M matrices, by LU with partial pivoting in double.
#include <cmath>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

double Determinant(std::vector<double>& a, int64_t n) {
  double det = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r) {
      if (std::fabs(a[r * n + col]) > std::fabs(a[pivot * n + col])) pivot = r;
    }
    if (a[pivot * n + col] == 0.0) return 0.0;
    if (pivot != col) {
      for (int64_t c = 0; c < n; ++c) std::swap(a[pivot * n + c], a[col * n + c]);
      det = -det;
    }
    const double p = a[col * n + col];
    det *= p;
    for (int64_t r = col + 1; r < n; ++r) {
      const double f = a[r * n + col] / p;
      for (int64_t c = col + 1; c < n; ++c) a[r * n + c] -= f * a[col * n + c];
    }
  }
  return det;
}

class DetKernel : public OpKernel {
 public:
  explicit DetKernel(const KernelInfo&) {}
  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const Shape& s = x->shape();
    if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2]) {
      return InvalidArgument("Det: input " + ShapeToString(s) + " must end in square matrices");
    }
    const int64_t n = s.back();
    Shape out(s.begin(), s.end() - 2);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), out));
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* xd = x->data<T>();
      T* yd = y->mutable_data<T>();
      std::vector<double> a(static_cast<size_t>(n * n));
      for (int64_t b = 0; b < y->size(); ++b) {
        for (int64_t i = 0; i < n * n; ++i) a[i] = static_cast<double>(ToCompute<T>(xd[b * n * n + i]));
        yd[b] = FromCompute<T>(static_cast<ComputeType<T>>(Determinant(a, n)));
      }
      return Status::Ok();
    });
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDetKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Det", 11, kOpenEnded, Make<DetKernel>());
}

}  // namespace onnxflow
