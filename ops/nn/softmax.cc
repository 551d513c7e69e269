// Softmax, LogSoftmax and Hardmax, versions 1, 11 and 13.
//
// Before version 13 the input is coerced to 2-D at `axis` (default 1): each row is everything from
// `axis` on. Since 13 the op runs along the single dim `axis` (default -1). Both read the tensor as
// [outer, n, inner]; rows with inner == 1 are contiguous and go straight to the SIMD row kernels,
// strided ones are gathered into a float buffer first. float16/bfloat16 compute in float, double
// in double. Softmax subtracts the row max before exp, so large inputs do not overflow. float
// Softmax/LogSoftmax along a strided axis run element-wise SIMD steps over whole rows of the
// [n, inner] slab instead (max, exp and sum, scale), in strips of inner that fit the cache; so do
// contiguous rows of at most kMaxShortRow, a block of them transposed into such a slab.
#include "ops/nn/register.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/row_kernels.h"

namespace onnxflow {
namespace {

enum class SoftmaxKind { kSoftmax, kLogSoftmax, kHardmax };

// Contiguous rows of at most this many run transposed (RunShortRows). One core, 4420 rows, row
// kernels -> transposed: n = 2 0.092 -> 0.011 ms, 8 0.101 -> 0.032, 15 0.101 -> 0.055, 16 0.084 ->
// 0.063; from 24 the two 256-row slabs outgrow L1 and it loses (0.112 -> 0.167).
constexpr int64_t kMaxShortRow = 16;

// In-place on a float row.
void FloatRow(SoftmaxKind kind, const float* x, float* y, int64_t n) {
  switch (kind) {
    case SoftmaxKind::kSoftmax: {
      const float m = RowMax(x, n);
      const float s = ExpShiftSum(x, m, y, n);
      AffineRow(y, 1.0f / s, 0.0f, y, n);
      return;
    }
    case SoftmaxKind::kLogSoftmax: {
      const float m = RowMax(x, n);
      // exp(x - m) goes to y as scratch; only the sum is kept.
      const float s = ExpShiftSum(x, m, y, n);
      // (x - m) - log(s), as ONNX Runtime: x - (m + log(s)) lost log(s) next to a large m (a row
      // max of 560 rounded -9e-6 to 0).
      AffineRow(x, 1.0f, -m, y, n);
      AffineRow(y, 1.0f, -std::log(s), y, n);
      return;
    }
    case SoftmaxKind::kHardmax: {
      int64_t best = 0;
      for (int64_t j = 1; j < n; ++j) if (x[j] > x[best]) best = j;
      for (int64_t j = 0; j < n; ++j) y[j] = j == best ? 1.0f : 0.0f;
      return;
    }
  }
}

void DoubleRow(SoftmaxKind kind, const double* x, double* y, int64_t n) {
  double m = -std::numeric_limits<double>::infinity();
  int64_t best = 0;
  for (int64_t j = 0; j < n; ++j) {
    if (x[j] > m) { m = x[j]; best = j; }
  }
  if (kind == SoftmaxKind::kHardmax) {
    for (int64_t j = 0; j < n; ++j) y[j] = j == best ? 1.0 : 0.0;
    return;
  }
  double s = 0.0;
  for (int64_t j = 0; j < n; ++j) s += std::exp(x[j] - m);
  if (kind == SoftmaxKind::kSoftmax) {
    for (int64_t j = 0; j < n; ++j) y[j] = std::exp(x[j] - m) / s;
  } else {
    const double shift = m + std::log(s);
    for (int64_t j = 0; j < n; ++j) y[j] = x[j] - shift;
  }
}

class SoftmaxKernel : public OpKernel {
 public:
  SoftmaxKernel(const KernelInfo& info, SoftmaxKind kind)
      : kind_(kind), coerce_2d_(info.opset() < 13), axis_(info.GetInt("axis", info.opset() < 13 ? 1 : -1)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    const int64_t rank = x->rank();
    int64_t outer = 1, n = 1, inner = 1;
    if (rank > 0) {
      ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(axis_, rank));
      outer = SizeToDim(x->shape(), axis);
      if (coerce_2d_) {
        n = SizeFromDim(x->shape(), axis);
      } else {
        n = x->dim(axis);
        inner = SizeFromDim(x->shape(), axis + 1);
      }
    }
    if (outer * n * inner == 0) return Status::Ok();
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      Run<T>(ctx, x->data<T>(), y->mutable_data<T>(), outer, n, inner);
      return Status::Ok();
    });
  }

 private:
  // Softmax/LogSoftmax of float along a strided axis: each strip of `inner` columns is processed
  // with element-wise row operations, reading every input row contiguously.
  void RunStrided(const KernelContext& ctx, const float* x, float* y, int64_t outer, int64_t n, int64_t inner) const {
    constexpr int64_t kStrip = 1024;
    const int64_t strips = (inner + kStrip - 1) / kStrip;
    ParallelFor(ctx, outer * strips, std::min(inner, kStrip) * n * 16, [&](int64_t b, int64_t e) {
      std::vector<float> m(kStrip), s(kStrip);
      for (int64_t item = b; item < e; ++item) {
        const int64_t o = item / strips, i0 = (item % strips) * kStrip, w = std::min(kStrip, inner - i0);
        Columns(x + o * n * inner + i0, y + o * n * inner + i0, n, inner, w, m.data(), s.data());
      }
    });
  }

  // Contiguous float rows of n <= kMaxShortRow: the row kernels would spend a pass of whole vectors on
  // each step of a few numbers (a face detector's scores over 2 classes for 4420 anchors: 96 us,
  // twice ONNX Runtime's time). A block of rows is transposed into an [n, rows] slab, run as a
  // strided axis, and transposed back.
  void RunShortRows(const KernelContext& ctx, const float* x, float* y, int64_t rows, int64_t n) const {
    constexpr int64_t kBlock = 256;
    const int64_t blocks = (rows + kBlock - 1) / kBlock;
    ParallelFor(ctx, blocks, kBlock * n * 16, [&](int64_t b, int64_t e) {
      std::vector<float> in(n * kBlock), out(n * kBlock), m(kBlock), s(kBlock);
      for (int64_t block = b; block < e; ++block) {
        const int64_t r0 = block * kBlock, w = std::min(kBlock, rows - r0);
        const float* src = x + r0 * n;
        float* dst = y + r0 * n;
        for (int64_t r = 0; r < w; ++r) {
          for (int64_t j = 0; j < n; ++j) in[j * kBlock + r] = src[r * n + j];
        }
        Columns(in.data(), out.data(), n, kBlock, w, m.data(), s.data());
        for (int64_t r = 0; r < w; ++r) {
          for (int64_t j = 0; j < n; ++j) dst[r * n + j] = out[j * kBlock + r];
        }
      }
    });
  }

  // Softmax/LogSoftmax down `w` columns of the [n, w] slab whose rows are `stride` floats apart;
  // m and s hold w floats each.
  void Columns(const float* src, float* dst, int64_t n, int64_t stride, int64_t w, float* m, float* s) const {
    std::copy(src, src + w, m);
    for (int64_t j = 1; j < n; ++j) MaxInto(src + j * stride, m, w);
    std::fill(s, s + w, 0.0f);
    for (int64_t j = 0; j < n; ++j) ExpSubAccumulate(src + j * stride, m, dst + j * stride, s, w);
    for (int64_t j = 0; j < n; ++j) {
      if (kind_ == SoftmaxKind::kSoftmax) {
        DivideInto(dst + j * stride, s, w);
      } else {
        SubtractLogInto(src + j * stride, m, s, dst + j * stride, w);
      }
    }
  }

  template <typename T>
  void Run(const KernelContext& ctx, const T* x, T* y, int64_t outer, int64_t n, int64_t inner) const {
    if constexpr (std::is_same<T, float>::value) {
      if (inner > 1 && kind_ != SoftmaxKind::kHardmax) {
        RunStrided(ctx, x, y, outer, n, inner);
        return;
      }
      if (n <= kMaxShortRow && outer > 1 && kind_ != SoftmaxKind::kHardmax) {
        RunShortRows(ctx, x, y, outer, n);
        return;
      }
    }
    using C = std::conditional_t<std::is_same<T, double>::value, double, float>;
    ParallelFor(ctx, outer * inner, n * 16, [&](int64_t b, int64_t e) {
      std::vector<C> in_buf, out_buf;
      for (int64_t row = b; row < e; ++row) {
        const int64_t o = row / inner, i = row % inner;
        const T* src = x + o * n * inner + i;
        T* dst = y + o * n * inner + i;
        if constexpr (std::is_same<T, C>::value) {
          if (inner == 1) {
            Apply(src, dst, n);
            continue;
          }
        }
        in_buf.resize(n);
        out_buf.resize(n);
        for (int64_t j = 0; j < n; ++j) in_buf[j] = static_cast<C>(ToCompute(src[j * inner]));
        Apply(in_buf.data(), out_buf.data(), n);
        for (int64_t j = 0; j < n; ++j) dst[j * inner] = FromCompute<T>(static_cast<ComputeType<T>>(out_buf[j]));
      }
    });
  }
  void Apply(const float* x, float* y, int64_t n) const { FloatRow(kind_, x, y, n); }
  void Apply(const double* x, double* y, int64_t n) const { DoubleRow(kind_, x, y, n); }

  SoftmaxKind kind_;
  bool coerce_2d_;
  int64_t axis_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterSoftmaxOps(KernelRegistry& registry) {
  struct Op { const char* name; SoftmaxKind kind; };
  for (const Op& op : {Op{"Softmax", SoftmaxKind::kSoftmax}, Op{"LogSoftmax", SoftmaxKind::kLogSoftmax},
                       Op{"Hardmax", SoftmaxKind::kHardmax}}) {
    const SoftmaxKind kind = op.kind;
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, op.name, 1, kOpenEnded, Make<SoftmaxKernel>(kind)));
  }
  return Status::Ok();
}

}  // namespace onnxflow
