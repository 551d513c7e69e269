// GlobalAveragePool, GlobalMaxPool (1, 22) and GlobalLpPool (1, 2, 22): one value per (n, c)
// plane of x = [N, C, D1, ...]; the output keeps the rank with spatial dims of size 1. float planes
// go through the SIMD row kernels.
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/register.h"
#include "ops/nn/row_kernels.h"

namespace onnxflow {
namespace {

enum class GlobalKind { kAverage, kMax, kLp };

class GlobalPoolKernel : public OpKernel {
 public:
  GlobalPoolKernel(const KernelInfo& info, GlobalKind kind)
      : kind_(kind), p_(info.opset() < 2 ? static_cast<int64_t>(info.GetFloat("p", 2.0f)) : info.GetInt("p", 2)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() < 2) return InvalidArgument("input 'X' must have rank >= 2, got shape " + ShapeToString(x->shape()));
    Shape out_shape = x->shape();
    for (size_t i = 2; i < out_shape.size(); ++i) out_shape[i] = 1;
    // One value per plane, each written below.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.AllocateUninitialized(0, x->dtype(), out_shape));
    const int64_t planes = x->dim(0) * x->dim(1), n = SizeFromDim(x->shape(), 2);
    if (kind_ == GlobalKind::kMax) {
      return DispatchType<float, double, Float16, BFloat16, int8_t, uint8_t>(x->dtype(), [&](auto tag) {
        using T = decltype(tag);
        Run<T>(ctx, x->data<T>(), y->mutable_data<T>(), planes, n);
        return Status::Ok();
      });
    }
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      Run<T>(ctx, x->data<T>(), y->mutable_data<T>(), planes, n);
      return Status::Ok();
    });
  }

 private:
  template <typename T>
  void Run(const KernelContext& ctx, const T* x, T* y, int64_t planes, int64_t n) const {
    using C = ComputeType<T>;
    ParallelFor(ctx, planes, n, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const T* src = x + p * n;
        if constexpr (std::is_same<T, float>::value) {
          if (kind_ == GlobalKind::kAverage) { y[p] = static_cast<float>(RowSum(src, n) / n); continue; }
          if (kind_ == GlobalKind::kMax && n > 0) { y[p] = RowMax(src, n); continue; }
        }
        if (kind_ == GlobalKind::kMax) {
          C best = std::numeric_limits<C>::lowest();
          if constexpr (std::is_floating_point<C>::value) best = -std::numeric_limits<C>::infinity();
          for (int64_t i = 0; i < n; ++i) best = std::max(best, ToCompute(src[i]));
          y[p] = FromCompute<T>(best);
          continue;
        }
        double sum = 0;
        for (int64_t i = 0; i < n; ++i) {
          const double v = ToCompute(src[i]);
          sum += kind_ == GlobalKind::kAverage ? v : p_ == 1 ? std::fabs(v) : p_ == 2 ? v * v : std::pow(std::fabs(v), double(p_));
        }
        double r = kind_ == GlobalKind::kAverage ? sum / n : p_ == 1 ? sum : p_ == 2 ? std::sqrt(sum) : std::pow(sum, 1.0 / p_);
        y[p] = FromCompute<T>(static_cast<ComputeType<T>>(r));
      }
    });
  }

  GlobalKind kind_;
  int64_t p_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterGlobalPools(KernelRegistry& registry) {
  struct Op { const char* name; GlobalKind kind; };
  for (const Op& op : {Op{"GlobalAveragePool", GlobalKind::kAverage}, Op{"GlobalMaxPool", GlobalKind::kMax},
                       Op{"GlobalLpPool", GlobalKind::kLp}}) {
    const GlobalKind kind = op.kind;
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, op.name, 1, kOpenEnded, Make<GlobalPoolKernel>(kind)));
  }
  return Status::Ok();
}

}  // namespace onnxflow
