// ReduceSum, ReduceMean, ReduceProd, ReduceMax, ReduceMin, ReduceL1, ReduceL2, ReduceLogSum,
// ReduceLogSumExp, ReduceSumSquare: one kernel class, one fold policy per op, all run by the
// reduction engine.
//
// Axes come from the attribute before ReduceSum-13 / the others' version 18, from the optional
// second input since. An empty axes list reduces everything, unless noop_with_empty_axes is set:
// then nothing is reduced and each output folds exactly one element (so ReduceSumSquare squares,
// ReduceL1 takes the absolute value, as numpy does with axis=()). Reducing an empty set gives the
// op's identity (0, 1, -inf for max and log-sum, +inf for min).
//
// Floating types accumulate in double (float16/bfloat16 included); integers in 64 bits with
// wrap-around, then narrow back to the input type like numpy does.
#include "ops/reduce/reduce_ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/nn/row_kernels.h"
#include "ops/reduce/reduction.h"

namespace onnxflow {
namespace {

// Wide accumulation types and the conversions to and from them.
template <typename T>
struct Wide {
  static constexpr bool kFloat = !std::is_integral<T>::value;
  using type = std::conditional_t<kFloat, double, std::conditional_t<std::is_signed<T>::value, int64_t, uint64_t>>;
  static type From(T x) { return static_cast<type>(ToCompute(x)); }
  static T To(type w) { return FromCompute<T>(static_cast<ComputeType<T>>(w)); }
  static double ToDouble(T x) { return static_cast<double>(ToCompute(x)); }
  static T FromDouble(double d) {
    if constexpr (kFloat) {
      return FromCompute<T>(static_cast<ComputeType<T>>(d));
    } else {
      // Out-of-range or NaN results have no integer value; clamp instead of undefined behaviour.
      if (!(d == d)) return T{0};
      if (d <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
      if (d >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
      return static_cast<T>(d);
    }
  }
};

// Integer adds/multiplies wrap (two's complement) instead of overflowing.
template <typename W>
W WrapAdd(W a, W b) {
  if constexpr (std::is_integral<W>::value) {
    return static_cast<W>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}
template <typename W>
W WrapMul(W a, W b) {
  if constexpr (std::is_integral<W>::value) {
    return static_cast<W>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
  } else {
    return a * b;
  }
}

// Sum of f(x) over a contiguous row with four independent accumulators: the adds of a long row
// overlap instead of waiting on one another.
template <typename T, typename F>
typename Wide<T>::type UnrolledSum(const T* x, int64_t n, F f) {
  using W = typename Wide<T>::type;
  W a0{0}, a1{0}, a2{0}, a3{0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    a0 = WrapAdd(a0, f(Wide<T>::From(x[i])));
    a1 = WrapAdd(a1, f(Wide<T>::From(x[i + 1])));
    a2 = WrapAdd(a2, f(Wide<T>::From(x[i + 2])));
    a3 = WrapAdd(a3, f(Wide<T>::From(x[i + 3])));
  }
  for (; i < n; ++i) a0 = WrapAdd(a0, f(Wide<T>::From(x[i])));
  return WrapAdd(WrapAdd(a0, a1), WrapAdd(a2, a3));
}

// Sum of x (or x^2) over a contiguous row in the policy's accumulator: float rows on SIMD, still in
// double: [1, 64, 128, 128] summed to one number at 1 thread, 0.14-0.22 -> 0.044-0.051 ms
// (ONNX Runtime 0.10, which sums in float: 524644 where the exact sum rounds to 524643.2, which is
// ours); other types unrolled.
template <bool kSquares, typename T>
typename Wide<T>::type FoldSum(const T* x, int64_t n) {
  if constexpr (std::is_same_v<T, float>) {
    return RowSumWide(x, n, kSquares);
  } else {
    using W = typename Wide<T>::type;
    return UnrolledSum(x, n, [](W w) { return kSquares ? WrapMul(w, w) : w; });
  }
}

template <typename T>
struct SumOf {
  using In = T; using Out = T; using Acc = typename Wide<T>::type;
  static Acc Init() { return Acc{0}; }
  static void Update(Acc& acc, T x) { acc = WrapAdd(acc, Wide<T>::From(x)); }
  static Acc FoldRow(const T* x, int64_t n) { return FoldSum<false>(x, n); }
  static void Combine(Acc& acc, const Acc& later) { acc = WrapAdd(acc, later); }
  static T Finalize(const Acc& acc, int64_t) { return Wide<T>::To(acc); }
};

template <typename T>
struct MeanOf : SumOf<T> {
  using Acc = typename Wide<T>::type;
  static T Finalize(const Acc& acc, int64_t count) {
    if constexpr (Wide<T>::kFloat) {
      return Wide<T>::To(acc / static_cast<double>(count));  // 0/0 = NaN for an empty set
    } else {
      return count == 0 ? T{0} : static_cast<T>(acc / static_cast<Acc>(count));
    }
  }
};

template <typename T>
struct ProdOf {
  using In = T; using Out = T; using Acc = typename Wide<T>::type;
  static Acc Init() { return Acc{1}; }
  static void Update(Acc& acc, T x) { acc = WrapMul(acc, Wide<T>::From(x)); }
  static T Finalize(const Acc& acc, int64_t) { return Wide<T>::To(acc); }
};

template <typename T>
struct SumSquareOf {
  using In = T; using Out = T; using Acc = typename Wide<T>::type;
  static Acc Init() { return Acc{0}; }
  static void Update(Acc& acc, T x) {
    const Acc w = Wide<T>::From(x);
    acc = WrapAdd(acc, WrapMul(w, w));
  }
  static Acc FoldRow(const T* x, int64_t n) { return FoldSum<true>(x, n); }
  static void Combine(Acc& acc, const Acc& later) { acc = WrapAdd(acc, later); }
  static T Finalize(const Acc& acc, int64_t) { return Wide<T>::To(acc); }
};

template <typename T>
struct L1Of {
  using In = T; using Out = T; using Acc = typename Wide<T>::type;
  static Acc Init() { return Acc{0}; }
  static void Update(Acc& acc, T x) {
    const Acc w = Wide<T>::From(x);
    if constexpr (std::is_unsigned<Acc>::value) {
      acc = WrapAdd(acc, w);
    } else {
      acc = WrapAdd(acc, w < 0 ? WrapMul(w, Acc{-1}) : w);
    }
  }
  static T Finalize(const Acc& acc, int64_t) { return Wide<T>::To(acc); }
};

// A sum of x (or x^2) in double whatever T: L2 and LogSum, finished by a square root or a log.
template <typename T, bool kSquares>
struct DoubleSumOf {
  using In = T; using Out = T; using Acc = double;
  static Acc Init() { return 0.0; }
  static void Update(Acc& acc, T x) {
    const double d = Wide<T>::ToDouble(x);
    acc += kSquares ? d * d : d;
  }
  static Acc FoldRow(const T* x, int64_t n) {
    if constexpr (std::is_same_v<T, float>) return RowSumWide(x, n, kSquares);
    Acc acc = Init();
    for (int64_t i = 0; i < n; ++i) Update(acc, x[i]);
    return acc;
  }
  static void Combine(Acc& acc, const Acc& later) { acc += later; }
};

template <typename T>
struct L2Of : DoubleSumOf<T, true> {
  static T Finalize(double acc, int64_t) { return Wide<T>::FromDouble(std::sqrt(acc)); }
};

template <typename T>
struct LogSumOf : DoubleSumOf<T, false> {
  static T Finalize(double acc, int64_t) { return Wide<T>::FromDouble(std::log(acc)); }
};

// Running max and the sum of exp(x - max), rescaled when the max grows: one pass, no overflow.
struct LogSumExpAcc {
  double max;
  double sum;
};
template <typename T>
struct LogSumExpOf {
  using In = T; using Out = T; using Acc = LogSumExpAcc;
  static Acc Init() { return {-std::numeric_limits<double>::infinity(), 0.0}; }
  static void Update(Acc& acc, T v) {
    const double x = Wide<T>::ToDouble(v);
    if (std::isnan(x) || std::isnan(acc.max)) {
      acc.max = std::numeric_limits<double>::quiet_NaN();
    } else if (x > acc.max) {
      acc.sum = (std::isinf(x) ? 0.0 : acc.sum * std::exp(acc.max - x)) + 1.0;
      acc.max = x;
    } else if (!std::isinf(acc.max)) {
      acc.sum += std::exp(x - acc.max);
    }
  }
  // A contiguous float row in SIMD: its max (NaN if any), then the float sum of exp(x - max) a
  // chunk at a time, the chunks' sums added in double ([64, 128, 512] over the last axis: 32 -> 1.7 ms).
  static Acc FoldRow(const T* x, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
      const float m = RowExtreme(x, n, true);
      if (std::isnan(m)) return {std::numeric_limits<double>::quiet_NaN(), 0.0};
      if (std::isinf(m)) return {m, m > 0 ? 1.0 : 0.0};  // +inf wins; all -inf (or none) sum to 0
      constexpr int64_t kChunk = 1024;
      float exps[kChunk];
      double sum = 0.0;
      for (int64_t i = 0; i < n; i += kChunk) sum += ExpShiftSum(x + i, m, exps, std::min(kChunk, n - i));
      return {m, sum};
    } else {
      Acc acc = Init();
      for (int64_t i = 0; i < n; ++i) Update(acc, x[i]);
      return acc;
    }
  }
  static T Finalize(const Acc& acc, int64_t) {
    if (std::isnan(acc.max)) return Wide<T>::FromDouble(acc.max);
    if (acc.sum == 0.0) return Wide<T>::FromDouble(-std::numeric_limits<double>::infinity());
    if (std::isinf(acc.max)) return Wide<T>::FromDouble(acc.max);
    return Wide<T>::FromDouble(acc.max + std::log(acc.sum));
  }
};

template <typename C>
bool IsNan(C v) {
  if constexpr (std::is_floating_point<C>::value) {
    return v != v;
  } else {
    return false;
  }
}

// Max (kMax) and min propagate NaN like numpy.
template <typename T, bool kMax>
struct ExtremeOf {
  using In = T; using Out = T; using Acc = ComputeType<T>;
  static Acc Init() {
    if constexpr (std::is_floating_point<Acc>::value) {
      return kMax ? -std::numeric_limits<Acc>::infinity() : std::numeric_limits<Acc>::infinity();
    } else {
      return kMax ? std::numeric_limits<Acc>::lowest() : std::numeric_limits<Acc>::max();
    }
  }
  static void Update(Acc& acc, T v) {
    const Acc x = ToCompute(v);
    if ((kMax ? x > acc : x < acc) || IsNan(x)) acc = IsNan(acc) ? acc : x;
  }
  static Acc FoldRow(const T* x, int64_t n) {
    if constexpr (std::is_same_v<T, float>) {
      return RowExtreme(x, n, kMax);  // SIMD, NaN noted apart: [64, 128, 512] 2.7 -> 0.31 ms
    } else {
      Acc acc = Init();
      for (int64_t i = 0; i < n; ++i) Update(acc, x[i]);
      return acc;
    }
  }
  static void Combine(Acc& acc, const Acc& later) {
    if (!IsNan(acc) && ((kMax ? later > acc : later < acc) || IsNan(later))) acc = later;
  }
  static T Finalize(const Acc& acc, int64_t) { return FromCompute<T>(acc); }
};
template <typename T>
using MaxOf = ExtremeOf<T, true>;
template <typename T>
using MinOf = ExtremeOf<T, false>;

template <template <typename> class P, typename... Ts>
Status RunTyped(const KernelContext& ctx, const ReductionPlan& plan, const Tensor& x, Tensor* y) {
  return DispatchType<Ts...>(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    RunReduction<P<T>>(ctx, plan, x.data<T>(), y->mutable_data<T>());
    return Status::Ok();
  });
}

#define ONNXFLOW_REDUCE_TYPES float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t, \
                              int8_t, uint8_t, int16_t, uint16_t

}  // namespace

ReduceKernel::ReduceKernel(const KernelInfo& info, ReduceKind kind, int axes_input_since)
    : kind_(kind),
      keepdims_(info.GetInt("keepdims", 1) != 0),
      noop_with_empty_axes_(info.GetInt("noop_with_empty_axes", 0) != 0),
      axes_from_input_(info.opset() >= axes_input_since),
      axes_attribute_(info.GetInts("axes")) {}

Result<std::unique_ptr<OpKernel>> ReduceKernel::Create(const KernelInfo& info, ReduceKind kind,
                                                       int axes_input_since) {
  if (info.opset() < axes_input_since && info.has_input(1)) {
    return InvalidArgument("this version of the op takes axes as an attribute, not an input");
  }
  return std::unique_ptr<OpKernel>(new ReduceKernel(info, kind, axes_input_since));
}

Result<std::vector<int64_t>> ReduceKernel::Axes(const KernelContext& ctx) const {
  if (!axes_from_input_) return axes_attribute_;
  const Tensor* axes = ctx.input_tensor(1);
  std::vector<int64_t> out;
  if (axes == nullptr) return out;
  if (axes->rank() > 1) return InvalidArgument("input 'axes' must be 1-D, got shape " + ShapeToString(axes->shape()));
  if (axes->dtype() == DataType::kInt64) {
    out.assign(axes->data<int64_t>(), axes->data<int64_t>() + axes->size());
  } else if (axes->dtype() == DataType::kInt32) {
    out.assign(axes->data<int32_t>(), axes->data<int32_t>() + axes->size());
  } else {
    return InvalidArgument(std::string("input 'axes' must be int64, got ") + DataTypeName(axes->dtype()));
  }
  return out;
}

Status ReduceKernel::Compute(KernelContext& ctx) const {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> axes, Axes(ctx));
  if (axes.empty() && !noop_with_empty_axes_) axes = AllAxes(x->rank());
  ONNXFLOW_ASSIGN_OR_RETURN(ReductionPlan plan, PlanReduction(x->shape(), axes, keepdims_));
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x->dtype(), plan.output_shape));
  switch (kind_) {
    case ReduceKind::kSum: return RunTyped<SumOf, ONNXFLOW_REDUCE_TYPES>(ctx, plan, *x, y);
    case ReduceKind::kMean: return RunTyped<MeanOf, ONNXFLOW_REDUCE_TYPES>(ctx, plan, *x, y);
    case ReduceKind::kProd: return RunTyped<ProdOf, ONNXFLOW_REDUCE_TYPES>(ctx, plan, *x, y);
    case ReduceKind::kSumSquare: return RunTyped<SumSquareOf, ONNXFLOW_REDUCE_TYPES>(ctx, plan, *x, y);
    case ReduceKind::kL1: return RunTyped<L1Of, ONNXFLOW_REDUCE_TYPES>(ctx, plan, *x, y);
    case ReduceKind::kL2: return RunTyped<L2Of, ONNXFLOW_REDUCE_TYPES>(ctx, plan, *x, y);
    case ReduceKind::kLogSum: return RunTyped<LogSumOf, ONNXFLOW_REDUCE_TYPES>(ctx, plan, *x, y);
    case ReduceKind::kLogSumExp: return RunTyped<LogSumExpOf, ONNXFLOW_REDUCE_TYPES>(ctx, plan, *x, y);
    case ReduceKind::kMax: return RunTyped<MaxOf, ONNXFLOW_REDUCE_TYPES, bool>(ctx, plan, *x, y);
    case ReduceKind::kMin: return RunTyped<MinOf, ONNXFLOW_REDUCE_TYPES, bool>(ctx, plan, *x, y);
  }
  return Internal("unknown reduction");
}

ONNXFLOW_REGISTRAR Status RegisterReduceOps(KernelRegistry& registry) {
  struct Op { const char* name; ReduceKind kind; int axes_input_since; };
  const Op ops[] = {
      {"ReduceSum", ReduceKind::kSum, 13},         {"ReduceMean", ReduceKind::kMean, 18},
      {"ReduceProd", ReduceKind::kProd, 18},       {"ReduceMax", ReduceKind::kMax, 18},
      {"ReduceMin", ReduceKind::kMin, 18},         {"ReduceL1", ReduceKind::kL1, 18},
      {"ReduceL2", ReduceKind::kL2, 18},           {"ReduceLogSum", ReduceKind::kLogSum, 18},
      {"ReduceLogSumExp", ReduceKind::kLogSumExp, 18}, {"ReduceSumSquare", ReduceKind::kSumSquare, 18},
  };
  for (const Op& op : ops) {
    const ReduceKind kind = op.kind;
    const int since = op.axes_input_since;
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(
        kOnnxDomain, op.name, 1, kOpenEnded,
        Make<ReduceKernel>(kind, since)));
  }
  return Status::Ok();
}

}  // namespace onnxflow
