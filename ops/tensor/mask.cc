// Ops that place input elements by a per-position rule: Trilu (keep a triangle), OneHot (on/off
// values by index), ReverseSequence (reverse a prefix of each sequence).
#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

// Trilu: over the last two dims, keeps j - i >= k (upper) or j - i <= k (lower); the rest is zero.
class TriluKernel : public OpKernel {
 public:
  explicit TriluKernel(const KernelInfo& info) : upper_(info.GetInt("upper", 1) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() < 2) return InvalidArgument("input must have rank >= 2, got " + ShapeToString(x->shape()));
    int64_t k = 0;
    if (const Tensor* k_t = ctx.input_tensor(1); k_t != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(k, ReadScalarInt(*k_t, "input 'k'"));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, x->dtype(), x->shape()));
    if (out->size() == 0) return Status::Ok();
    const int64_t rows = x->dim(x->rank() - 2), cols = x->dim(x->rank() - 1);
    const int64_t total_rows = x->size() / cols;
    return DispatchBySize(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = out->mutable_data<T>();
      ParallelFor(ctx, total_rows, cols, [&](int64_t b, int64_t e) {
        for (int64_t r = b; r < e; ++r) {
          const int64_t i = r % rows;
          // The kept columns form one contiguous run; the output is already zero elsewhere.
          int64_t lo = 0, hi = cols;
          if (upper_) {
            lo = std::clamp<int64_t>(i + std::clamp<int64_t>(k, -cols - rows, cols + rows), 0, cols);
          } else {
            hi = std::clamp<int64_t>(i + std::clamp<int64_t>(k, -cols - rows, cols + rows) + 1, 0, cols);
          }
          if (hi > lo) std::copy(src + r * cols + lo, src + r * cols + hi, dst + r * cols + lo);
        }
      });
      return Status::Ok();
    });
  }

 private:
  bool upper_;
};

// OneHot: inserts a dim of size `depth` at `axis`; values[1] where the (negative-wrapped) index
// matches, values[0] elsewhere. Indices outside [-depth, depth) give an all-off row.
class OneHotKernel : public OpKernel {
 public:
  explicit OneHotKernel(const KernelInfo& info) : axis_(info.GetInt("axis", -1)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* indices_t, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* depth_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* values, ctx.RequireTensor(2));
    if (values->size() != 2) {
      return InvalidArgument("input 'values' must hold [off, on], got shape " + ShapeToString(values->shape()));
    }
    if (depth_t->size() != 1) return InvalidArgument("input 'depth' must be a scalar");
    double depth_value = 0;
    ONNXFLOW_RETURN_IF_ERROR(DispatchType<ONNXFLOW_NUMERIC_TYPES>(depth_t->dtype(), [&](auto tag) {
      using T = decltype(tag);
      depth_value = static_cast<double>(ToCompute(depth_t->data<T>()[0]));
      return Status::Ok();
    }));
    if (!(depth_value >= 1) || depth_value > static_cast<double>(INT64_MAX / 2)) {
      return InvalidArgument("input 'depth' must be a positive count, got " + std::to_string(depth_value));
    }
    const int64_t depth = static_cast<int64_t>(depth_value);
    const int64_t out_rank = indices_t->rank() + 1;
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, out_rank));
    // Indices as int64; fractional float indices truncate toward zero.
    std::vector<int64_t> indices(static_cast<size_t>(indices_t->size()));
    ONNXFLOW_RETURN_IF_ERROR(DispatchType<ONNXFLOW_NUMERIC_TYPES>(indices_t->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* p = indices_t->data<T>();
      for (size_t i = 0; i < indices.size(); ++i) {
        const double v = static_cast<double>(ToCompute(p[i]));
        indices[i] = std::isfinite(v) && std::fabs(v) < 9e18 ? static_cast<int64_t>(v) : INT64_MAX;
      }
      return Status::Ok();
    }));
    Shape out_shape = indices_t->shape();
    out_shape.insert(out_shape.begin() + axis, depth);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, values->dtype(), out_shape));
    if (out->size() == 0) return Status::Ok();
    const int64_t outer = SizeToDim(indices_t->shape(), axis);
    const int64_t inner = SizeFromDim(indices_t->shape(), axis);
    return DispatchBySize(values->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T off = values->data<T>()[0];
      const T on = values->data<T>()[1];
      T* y = out->mutable_data<T>();
      std::fill_n(y, out->size(), off);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < inner; ++j) {
          int64_t idx = indices[o * inner + j];
          if (idx < 0) idx += depth;
          if (idx < 0 || idx >= depth) continue;
          y[(o * depth + idx) * inner + j] = on;
        }
      }
      return Status::Ok();
    });
  }

 private:
  int64_t axis_;
};

// ReverseSequence: for each batch entry b, reverses the first sequence_lens[b] steps along the
// time axis and copies the rest.
class ReverseSequenceKernel : public OpKernel {
 public:
  explicit ReverseSequenceKernel(const KernelInfo& info)
      : time_axis_(info.GetInt("time_axis", 0)), batch_axis_(info.GetInt("batch_axis", 1)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* lens_t, ctx.RequireTensor(1));
    if (x->rank() < 2) return InvalidArgument("input must have rank >= 2, got " + ShapeToString(x->shape()));
    const bool time_first = time_axis_ == 0 && batch_axis_ == 1;
    if (!time_first && !(time_axis_ == 1 && batch_axis_ == 0)) {
      return InvalidArgument("time_axis and batch_axis must be 0 and 1 in some order");
    }
    const int64_t steps = x->dim(time_axis_), batch = x->dim(batch_axis_);
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> lens, ReadInt64s(*lens_t, "input 'sequence_lens'"));
    if (static_cast<int64_t>(lens.size()) != batch) {
      return InvalidArgument("input 'sequence_lens' has " + std::to_string(lens.size()) + " entries for batch " +
                             std::to_string(batch));
    }
    for (int64_t len : lens) {
      if (len < 0 || len > steps) {
        return OutOfRange("input 'sequence_lens': length " + std::to_string(len) + " is outside [0, " +
                          std::to_string(steps) + "]");
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, x->dtype(), x->shape()));
    if (out->size() == 0) return Status::Ok();
    const int64_t inner = SizeFromDim(x->shape(), 2);
    // Element offset of (time t, batch b).
    auto at = [&](int64_t t, int64_t b) { return (time_first ? t * batch + b : b * steps + t) * inner; };
    return DispatchBySize(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = out->mutable_data<T>();
      for (int64_t b = 0; b < batch; ++b) {
        for (int64_t t = 0; t < steps; ++t) {
          const int64_t from = t < lens[b] ? lens[b] - 1 - t : t;
          std::copy_n(src + at(from, b), inner, dst + at(t, b));
        }
      }
      return Status::Ok();
    });
  }

 private:
  int64_t time_axis_;
  int64_t batch_axis_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMaskKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Trilu", 14, kOpenEnded, Make<TriluKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "OneHot", 9, kOpenEnded, Make<OneHotKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "ReverseSequence", 10, kOpenEnded, Make<ReverseSequenceKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
