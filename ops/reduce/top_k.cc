// TopK (versions 1, 10, 11, 24): the k largest (or, since 11, smallest) elements along an axis
// and their int64 indices. k is an attribute in version 1 and a one-element int64 input since 10.
// Equal values keep index order (the smaller index first), which the spec asks for; results are
// always sorted, which `sorted = 0` allows. NaN counts as larger than every number.
#include "ops/reduce/register.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

template <typename C>
bool NanValue(C v) {
  if constexpr (std::is_floating_point<C>::value) {
    return v != v;
  } else {
    return false;
  }
}

// Strict "a comes before b" for the largest-first order, NaN first, ties by index.
template <typename C>
struct LargestFirst {
  bool operator()(const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) const {
    const bool an = NanValue(a.first), bn = NanValue(b.first);
    if (an != bn) return an;
    if (!an && a.first != b.first) return a.first > b.first;
    return a.second < b.second;
  }
};
template <typename C>
struct SmallestFirst {
  bool operator()(const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) const {
    const bool an = NanValue(a.first), bn = NanValue(b.first);
    if (an != bn) return bn;
    if (!an && a.first != b.first) return a.first < b.first;
    return a.second < b.second;
  }
};

class TopKKernel : public OpKernel {
 public:
  explicit TopKKernel(const KernelInfo& info)
      : k_from_input_(info.opset() >= 10),
        k_attribute_(info.GetInt("k", -1)),
        axis_(info.GetInt("axis", -1)),
        largest_(info.GetInt("largest", 1) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    int64_t k = k_attribute_;
    if (k_from_input_) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* kt, ctx.RequireTensor(1));
      if (kt->size() != 1 || (kt->dtype() != DataType::kInt64 && kt->dtype() != DataType::kInt32)) {
        return InvalidArgument("input 'K' must be one int64 value, got " + std::string(DataTypeName(kt->dtype())) +
                               " of shape " + ShapeToString(kt->shape()));
      }
      k = kt->dtype() == DataType::kInt64 ? kt->data<int64_t>()[0] : kt->data<int32_t>()[0];
    }
    const int64_t rank = x->rank();
    if (rank == 0) return InvalidArgument("input 'X' must have rank >= 1");
    ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank));
    const int64_t n = x->dim(axis);
    if (k < 0 || k > n) {
      return OutOfRange("k = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "] for axis " +
                        std::to_string(axis) + " of input shape " + ShapeToString(x->shape()));
    }
    Shape out_shape = x->shape();
    out_shape[axis] = k;
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* values, ctx.Allocate(0, x->dtype(), out_shape));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* indices, ctx.Allocate(1, DataType::kInt64, out_shape));
    const int64_t outer = SizeToDim(x->shape(), axis);
    const int64_t inner = SizeFromDim(x->shape(), axis + 1);
    if (k == 0 || outer * inner == 0) return Status::Ok();
    return DispatchType<ONNXFLOW_NUMERIC_TYPES>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      using C = ComputeType<T>;
      const T* in = x->data<T>();
      T* vout = values->mutable_data<T>();
      int64_t* iout = indices->mutable_data<int64_t>();
      ParallelFor(ctx, outer * inner, n * 8, [&](int64_t b, int64_t e) {
        std::vector<std::pair<C, int64_t>> row(n);
        for (int64_t item = b; item < e; ++item) {
          const int64_t o = item / inner;
          const int64_t i = item % inner;
          const T* base = in + o * n * inner + i;
          for (int64_t j = 0; j < n; ++j) row[j] = {ToCompute(base[j * inner]), j};
          if (largest_) {
            std::partial_sort(row.begin(), row.begin() + k, row.end(), LargestFirst<C>());
          } else {
            std::partial_sort(row.begin(), row.begin() + k, row.end(), SmallestFirst<C>());
          }
          for (int64_t j = 0; j < k; ++j) {
            const int64_t at = (o * k + j) * inner + i;
            vout[at] = base[row[j].second * inner];
            iout[at] = row[j].second;
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  bool k_from_input_;
  int64_t k_attribute_;
  int64_t axis_;
  bool largest_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterTopK(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "TopK", 1, kOpenEnded, Make<TopKKernel>());
}

}  // namespace onnxflow
