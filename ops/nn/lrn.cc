// LRN (1, 13): local response normalization across channels of x = [N, C, D1, ...]:
//   y = x / (bias + alpha / size * sum of x^2 over channels c - floor((size-1)/2) ..
//                                                        c + ceil((size-1)/2))^beta
// For each image the squares are computed once, then each channel adds its window of squared
// planes; float runs both steps through the SIMD row kernels (the power as exp(e * log(base))).
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/register.h"
#include "ops/nn/norm_util.h"

namespace onnxflow {
namespace {

class LrnKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t size, info.RequireInt("size"));
    if (size <= 0) return InvalidArgument("attribute 'size' must be positive, got " + std::to_string(size));
    return std::unique_ptr<OpKernel>(new LrnKernel(info, size));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() < 2) return InvalidArgument("input 'X' must have rank >= 2, got shape " + ShapeToString(x->shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x->dtype(), x->shape()));
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = NormCompute<T>;
      const int64_t n = x->dim(0), c = x->dim(1), plane = SizeFromDim(x->shape(), 2);
      std::vector<C> in_storage, out_storage;
      const C* in = ComputeView<C>(x->data<T>(), x->size(), in_storage);
      C* out = ComputeOut<C>(y->mutable_data<T>(), y->size(), out_storage);
      const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;
      const double coef = static_cast<double>(alpha_) / size_;
      ParallelFor(ctx, n * c, plane * (size_ + 8), [&](int64_t b, int64_t e) {
        std::vector<C> sum(plane);
        for (int64_t row = b; row < e; ++row) {
          const int64_t img = row / c, ch = row % c;
          std::fill(sum.begin(), sum.end(), C(0));
          for (int64_t k = std::max<int64_t>(0, ch - before); k <= std::min(c - 1, ch + after); ++k) {
            const C* src = in + (img * c + k) * plane;
            if constexpr (std::is_same<C, float>::value) {
              AddSquares(src, sum.data(), plane);
            } else {
              for (int64_t i = 0; i < plane; ++i) sum[i] += src[i] * src[i];
            }
          }
          const C* src = in + row * plane;
          C* dst = out + row * plane;
          if constexpr (std::is_same<C, float>::value) {
            ScaleByPower(src, sum.data(), bias_, static_cast<float>(coef), -beta_, dst, plane);
          } else {
            for (int64_t i = 0; i < plane; ++i) {
              dst[i] = static_cast<C>(src[i] / std::pow(bias_ + coef * sum[i], static_cast<double>(beta_)));
            }
          }
        }
      });
      StoreBack<C>(out, y->mutable_data<T>(), y->size());
      return Status::Ok();
    });
  }

 private:
  LrnKernel(const KernelInfo& info, int64_t size)
      : size_(size),
        alpha_(info.GetFloat("alpha", 1e-4f)),
        beta_(info.GetFloat("beta", 0.75f)),
        bias_(info.GetFloat("bias", 1.0f)) {}

  int64_t size_;
  float alpha_;
  float beta_;
  float bias_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterLrn(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "LRN", 1, kOpenEnded, Make<LrnKernel>());
}

}  // namespace onnxflow
