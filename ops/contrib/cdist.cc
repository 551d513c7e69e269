// com.microsoft CDist (version 1): the pairwise distances between the rows of A [N, K] and B [M, K],
// [N, M], with metric "sqeuclidean" (the default) or "euclidean", in float or double. skl2onnx
// writes it for nearest-neighbour models when asked to (option optim='cdist'). The differences are
// squared and summed directly, not through ||a||^2 - 2ab + ||b||^2: that form cancels to noise
// (even negatives) for close rows, where neighbour searches look.
#include <cmath>
#include <string>

#include "ops/contrib/common.h"
#include "ops/contrib/register.h"
#include "ops/framework/dispatch.h"
#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace contrib {
namespace {

class CDistKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const std::string metric = info.GetString("metric", "sqeuclidean");
    if (metric != "sqeuclidean" && metric != "euclidean") {
      return InvalidArgument("metric must be 'sqeuclidean' or 'euclidean', not '" + metric + "'");
    }
    auto k = std::make_unique<CDistKernel>();
    k->root_ = metric == "euclidean";
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* a, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ctx.RequireTensor(1));
    if (a->rank() != 2 || b->rank() != 2 || a->dim(1) != b->dim(1)) {
      return InvalidArgument("A and B must be [N, K] and [M, K], got " + ShapeToString(a->shape()) + " and " +
                             ShapeToString(b->shape()));
    }
    if (a->dtype() != b->dtype() || (a->dtype() != DataType::kFloat && a->dtype() != DataType::kDouble)) {
      return InvalidArgument("A and B must both be float or both double");
    }
    const int64_t n = a->dim(0), m = b->dim(0), k = a->dim(1);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, a->dtype(), {n, m}));
    return DispatchType<float, double>(a->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* pa = a->data<T>();
      const T* pb = b->data<T>();
      T* out = y->mutable_data<T>();
      ParallelFor(ctx, n, m * k * 2, [&](int64_t r0, int64_t r1) {
        for (int64_t i = r0; i < r1; ++i) {
          for (int64_t j = 0; j < m; ++j) {
            T sum = 0;
            for (int64_t d = 0; d < k; ++d) {
              const T diff = pa[i * k + d] - pb[j * k + d];
              sum += diff * diff;
            }
            out[i * m + j] = root_ ? std::sqrt(sum) : sum;
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  bool root_ = false;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterCDist(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "CDist", 1, kOpenEnded, Make<CDistKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
