// CumSum (versions 11, 14) and CumProd (26): running sums / products along the axis given as a
// scalar (or one-element) int32/int64 input. `exclusive` shifts by one (the first output is the
// identity), `reverse` runs from the end. Floats accumulate in their compute type in order, like
// numpy's cumsum; integers wrap around.
#include "ops/reduce/register.h"

#include <string>
#include <type_traits>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

template <typename C>
C Combine(C acc, C x, bool product) {
  if constexpr (std::is_integral<C>::value) {
    using U = std::make_unsigned_t<C>;
    return static_cast<C>(product ? static_cast<U>(acc) * static_cast<U>(x) : static_cast<U>(acc) + static_cast<U>(x));
  } else {
    return product ? acc * x : acc + x;
  }
}

class CumulativeKernel : public OpKernel {
 public:
  CumulativeKernel(const KernelInfo& info, bool product)
      : product_(product),
        exclusive_(info.GetInt("exclusive", 0) != 0),
        reverse_(info.GetInt("reverse", 0) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* axis_tensor, ctx.RequireTensor(1));
    if (axis_tensor->size() != 1) {
      return InvalidArgument("input 'axis' must hold one value, got shape " + ShapeToString(axis_tensor->shape()));
    }
    int64_t axis_value = 0;
    if (axis_tensor->dtype() == DataType::kInt64) {
      axis_value = axis_tensor->data<int64_t>()[0];
    } else if (axis_tensor->dtype() == DataType::kInt32) {
      axis_value = axis_tensor->data<int32_t>()[0];
    } else {
      return InvalidArgument(std::string("input 'axis' must be int32 or int64, got ") +
                             DataTypeName(axis_tensor->dtype()));
    }
    const int64_t rank = x->rank();
    if (rank == 0) return InvalidArgument("input 'x' must have rank >= 1");
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_value, rank));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x->dtype(), x->shape()));
    const int64_t n = x->dim(axis);
    const int64_t outer = SizeToDim(x->shape(), axis);
    const int64_t inner = SizeFromDim(x->shape(), axis + 1);
    if (n == 0 || outer * inner == 0) return Status::Ok();
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeType<T>;
      const T* in = x->data<T>();
      T* out = y->mutable_data<T>();
      ParallelFor(ctx, outer, n * inner, [&](int64_t b, int64_t e) {
        for (int64_t o = b; o < e; ++o) {
          for (int64_t i = 0; i < inner; ++i) {
            C acc = product_ ? C(1) : C(0);
            for (int64_t s = 0; s < n; ++s) {
              const int64_t j = reverse_ ? n - 1 - s : s;
              const int64_t at = (o * n + j) * inner + i;
              const C v = ToCompute(in[at]);
              if (exclusive_) {
                out[at] = FromCompute<T>(acc);
                acc = Combine(acc, v, product_);
              } else {
                acc = Combine(acc, v, product_);
                out[at] = FromCompute<T>(acc);
              }
            }
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  bool product_;
  bool exclusive_;
  bool reverse_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterCumulativeOps(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "CumSum", 11, kOpenEnded, Make<CumulativeKernel>(false)));
  return registry.Register(kOnnxDomain, "CumProd", 26, kOpenEnded, Make<CumulativeKernel>(true));
}

}  // namespace onnxflow
