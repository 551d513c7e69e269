// ArgMax and ArgMin (versions 1, 11, 12, 13): the int64 index of the largest / smallest element
// along one axis. Ties go to the first index, or the last with select_last_index (version 12+).
// The first NaN wins, as in numpy.
#include "ops/reduce/arg_min_max.h"

#include <string>
#include <type_traits>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/row_kernels.h"
#include "ops/reduce/reduction.h"

namespace onnxflow {
namespace {

template <typename C>
bool IsNanValue(C v) {
  if constexpr (std::is_floating_point<C>::value) {
    return v != v;
  } else {
    return false;
  }
}

// True when `x` should replace the current best `best`.
template <bool kMax, bool kLast, typename C>
bool Better(C x, C best) {
  if (IsNanValue(best)) return false;
  if (IsNanValue(x)) return true;
  if constexpr (kMax) {
    return kLast ? x >= best : x > best;
  } else {
    return kLast ? x <= best : x < best;
  }
}

// A contiguous float row in two SIMD passes: its extreme (NaN if any), then where that value first
// (last) sits. A classifier's or a language model's [1, 128, 32000] logits: 4.0 -> 0.56 ms.
int64_t ArgOfFloatRow(const float* row, int64_t n, bool max, bool last) {
  const float best = RowExtreme(row, n, max);
  if (best != best) {  // the first NaN wins
    for (int64_t j = 0; j < n; ++j) {
      if (row[j] != row[j]) return j;
    }
  }
  return RowFind(row, n, best, last);
}

template <typename T, bool kMax, bool kLast>
void ArgReduce(const KernelContext& ctx, const T* x, int64_t* y, int64_t outer, int64_t n, int64_t inner) {
  using C = ComputeType<T>;
  if constexpr (std::is_same_v<T, float>) {
    if (inner == 1) {
      ParallelFor(ctx, outer, n, [&](int64_t b, int64_t e) {
        for (int64_t k = b; k < e; ++k) y[k] = ArgOfFloatRow(x + k * n, n, kMax, kLast);
      });
      return;
    }
  }
  ParallelFor(ctx, outer * inner, n * 2, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const int64_t o = k / inner;
      const int64_t i = k % inner;
      const T* base = x + o * n * inner + i;
      C best = ToCompute(base[0]);
      int64_t best_index = 0;
      for (int64_t j = 1; j < n; ++j) {
        const C v = ToCompute(base[j * inner]);
        if (Better<kMax, kLast>(v, best)) {
          best = v;
          best_index = j;
        }
      }
      y[k] = best_index;
    }
  });
}

}  // namespace

ArgMinMaxKernel::ArgMinMaxKernel(const KernelInfo& info, bool is_max)
    : is_max_(is_max),
      axis_(info.GetInt("axis", 0)),
      keepdims_(info.GetInt("keepdims", 1) != 0),
      select_last_index_(info.GetInt("select_last_index", 0) != 0) {}

Status ArgMinMaxKernel::Compute(KernelContext& ctx) const {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  const int64_t rank = x->rank();
  ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank == 0 ? 1 : rank));
  Shape out_shape;
  for (int64_t d = 0; d < rank; ++d) {
    if (d != axis) out_shape.push_back(x->dim(d));
    else if (keepdims_) out_shape.push_back(1);
  }
  const int64_t n = rank == 0 ? 1 : x->dim(axis);
  const int64_t outer = rank == 0 ? 1 : SizeToDim(x->shape(), axis);
  const int64_t inner = rank == 0 ? 1 : SizeFromDim(x->shape(), axis + 1);
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, DataType::kInt64, out_shape));
  if (outer * inner == 0) return Status::Ok();
  if (n == 0) {
    return InvalidArgument("cannot take the arg " + std::string(is_max_ ? "max" : "min") + " over axis " +
                           std::to_string(axis) + " of size 0 (input shape " + ShapeToString(x->shape()) + ")");
  }
  return DispatchType<ONNXFLOW_NUMERIC_TYPES>(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* in = x->data<T>();
    int64_t* out = y->mutable_data<int64_t>();
    if (is_max_) {
      if (select_last_index_) ArgReduce<T, true, true>(ctx, in, out, outer, n, inner);
      else ArgReduce<T, true, false>(ctx, in, out, outer, n, inner);
    } else {
      if (select_last_index_) ArgReduce<T, false, true>(ctx, in, out, outer, n, inner);
      else ArgReduce<T, false, false>(ctx, in, out, outer, n, inner);
    }
    return Status::Ok();
  });
}

ONNXFLOW_REGISTRAR Status RegisterArgMinMax(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "ArgMax", 1, kOpenEnded, Make<ArgMinMaxKernel>(true)));
  return registry.Register(kOnnxDomain, "ArgMin", 1, kOpenEnded, Make<ArgMinMaxKernel>(false));
}

}  // namespace onnxflow
