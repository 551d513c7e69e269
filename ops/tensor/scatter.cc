// Scatter (the deprecated name of ScatterElements), ScatterElements, ScatterND and TensorScatter:
// a copy of the data with some elements replaced (or reduced with add/mul/max/min) by updates at
// indices taken from data. Every index is checked before anything is written.
#include <algorithm>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/tensor/indices.h"
#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

enum class Reduction { kNone, kAdd, kMul, kMax, kMin };

Result<Reduction> ParseReduction(const std::string& s) {
  if (s == "none") return Reduction::kNone;
  if (s == "add") return Reduction::kAdd;
  if (s == "mul") return Reduction::kMul;
  if (s == "max") return Reduction::kMax;
  if (s == "min") return Reduction::kMin;
  return InvalidArgument("unknown reduction '" + s + "'");
}

template <typename T>
T Combine(Reduction r, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    switch (r) {
      case Reduction::kAdd:
      case Reduction::kMax: return a || b;
      case Reduction::kMul:
      case Reduction::kMin: return a && b;
      default: return b;
    }
  } else {
    const ComputeType<T> x = ToCompute(a), y = ToCompute(b);
    switch (r) {
      case Reduction::kAdd: return FromCompute<T>(x + y);
      case Reduction::kMul: return FromCompute<T>(x * y);
      case Reduction::kMax: return FromCompute<T>(std::max(x, y));
      case Reduction::kMin: return FromCompute<T>(std::min(x, y));
      default: return b;
    }
  }
}

// Runs f(T{}) with the element type: by size for plain replacement (any dtype moves), by value
// type when updates are combined arithmetically.
template <typename F>
Status DispatchForReduction(DataType dtype, Reduction r, F&& f) {
  if (r == Reduction::kNone) return DispatchBySize(dtype, f);
  return DispatchType<ONNXFLOW_NUMERIC_TYPES, bool>(dtype, f);
}

template <typename T>
void Apply(Reduction r, T& dst, const T& v) {
  if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, Bytes16>) {
    dst = v;  // moved by size: only ever reached with Reduction::kNone
  } else {
    dst = r == Reduction::kNone ? v : Combine(r, dst, v);
  }
}

// out = a fresh copy of `data` (output 0).
Result<Tensor*> CopyOfData(KernelContext& ctx, const Tensor& data) {
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, data.dtype(), data.shape()));
  ONNXFLOW_RETURN_IF_ERROR(DispatchBySize(data.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = data.data<T>();
    T* dst = out->mutable_data<T>();
    ParallelFor(ctx, data.size(), 1, [&](int64_t b, int64_t e) { std::copy(src + b, src + e, dst + b); });
    return Status::Ok();
  }));
  return out;
}

// ScatterElements-11+ (reduction from 16) and Scatter-9/10 (no reduction).
class ScatterElementsKernel : public OpKernel {
 public:
  ScatterElementsKernel(int64_t axis, Reduction reduction) : axis_(axis), reduction_(reduction) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(Reduction r, ParseReduction(info.GetString("reduction", "none")));
    return std::unique_ptr<OpKernel>(new ScatterElementsKernel(info.GetInt("axis", 0), r));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* indices_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* updates, ctx.RequireTensor(2));
    const int64_t rank = data->rank();
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, rank));
    if (indices_t->shape() != updates->shape()) {
      return InvalidArgument("input 'indices' " + ShapeToString(indices_t->shape()) + " and 'updates' " +
                             ShapeToString(updates->shape()) + " must have the same shape");
    }
    if (updates->dtype() != data->dtype()) return InvalidArgument("input 'updates' must have the data's type");
    ONNXFLOW_RETURN_IF_ERROR(CheckElementsIndicesShape(*data, *indices_t, axis));
    ONNXFLOW_ASSIGN_OR_RETURN(const std::vector<int64_t> indices, NormalizedIndices(*indices_t, data->dim(axis)));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, CopyOfData(ctx, *data));
    const std::vector<int64_t> strides = Strides(data->shape());
    const Shape& ishape = indices_t->shape();
    const int64_t n = indices_t->size();
    // Sequential: duplicate indices must combine in order.
    return DispatchForReduction(data->dtype(), reduction_, [&](auto tag) {
      using T = decltype(tag);
      const T* upd = updates->data<T>();
      T* dst = out->mutable_data<T>();
      std::vector<int64_t> idx(rank, 0);
      for (int64_t i = 0; i < n; ++i) {
        int64_t off = 0;
        for (int64_t d = 0; d < rank; ++d) off += (d == axis ? indices[i] : idx[d]) * strides[d];
        Apply(reduction_, dst[off], upd[i]);
        for (int64_t d = rank - 1; d >= 0; --d) {
          if (++idx[d] < ishape[d]) break;
          idx[d] = 0;
        }
      }
      return Status::Ok();
    });
  }

 private:
  int64_t axis_;
  Reduction reduction_;
};

// ScatterND: each index tuple (last dim of indices, length k) addresses a block
// data[i1..ik, ...] that the matching slice of updates replaces or combines into.
class ScatterNDKernel : public OpKernel {
 public:
  explicit ScatterNDKernel(Reduction reduction) : reduction_(reduction) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(Reduction r, ParseReduction(info.GetString("reduction", "none")));
    return std::unique_ptr<OpKernel>(new ScatterNDKernel(r));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* indices_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* updates, ctx.RequireTensor(2));
    const int64_t r = data->rank(), q = indices_t->rank();
    if (q < 1) return InvalidArgument("input 'indices' must have rank >= 1");
    if (updates->dtype() != data->dtype()) return InvalidArgument("input 'updates' must have the data's type");
    const int64_t k = indices_t->dim(q - 1);
    if (k > r) {
      return InvalidArgument("indices' last dim " + std::to_string(k) + " exceeds the data rank " + std::to_string(r));
    }
    Shape expected(indices_t->shape().begin(), indices_t->shape().end() - 1);
    expected.insert(expected.end(), data->shape().begin() + k, data->shape().end());
    if (updates->shape() != expected) {
      return InvalidArgument("input 'updates' has shape " + ShapeToString(updates->shape()) + ", expected " +
                             ShapeToString(expected));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> raw, ReadIndices(*indices_t));
    const int64_t tuples = updates->size() == 0 ? 0 : SizeToDim(indices_t->shape(), q - 1);
    const int64_t block = SizeFromDim(data->shape(), k);
    ONNXFLOW_ASSIGN_OR_RETURN(const std::vector<int64_t> offsets, TupleOffsets(*data, raw, tuples, k, /*batch_dims=*/0));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, CopyOfData(ctx, *data));
    return DispatchForReduction(data->dtype(), reduction_, [&](auto tag) {
      using T = decltype(tag);
      const T* upd = updates->data<T>();
      T* dst = out->mutable_data<T>();
      for (int64_t t = 0; t < tuples; ++t) {
        T* to = dst + offsets[t];
        const T* from = upd + t * block;
        if (reduction_ == Reduction::kNone) {
          std::copy_n(from, block, to);
        } else {
          for (int64_t j = 0; j < block; ++j) Apply(reduction_, to[j], from[j]);
        }
      }
      return Status::Ok();
    });
  }

 private:
  Reduction reduction_;
};

// TensorScatter (opset 24): writes `update` into a copy of `past_cache` along the sequence axis,
// starting per batch at write_indices[b] (0 when absent); "circular" wraps modulo the axis size.
class TensorScatterKernel : public OpKernel {
 public:
  TensorScatterKernel(int64_t axis, bool circular) : axis_(axis), circular_(circular) {}

  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    const std::string mode = info.GetString("mode", "linear");
    if (mode != "linear" && mode != "circular") return InvalidArgument("unknown mode '" + mode + "'");
    return std::unique_ptr<OpKernel>(new TensorScatterKernel(info.GetInt("axis", -2), mode == "circular"));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* past, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* update, ctx.RequireTensor(1));
    const int64_t rank = past->rank();
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, rank));
    if (axis == 0) return InvalidArgument("axis cannot be 0 (the batch dimension)");
    if (update->dtype() != past->dtype()) return InvalidArgument("input 'update' must have past_cache's type");
    if (update->rank() != rank) {
      return InvalidArgument("input 'update' " + ShapeToString(update->shape()) + " must have the rank of past_cache " +
                             ShapeToString(past->shape()));
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (d != axis && update->dim(d) != past->dim(d)) {
        return InvalidArgument("input 'update' " + ShapeToString(update->shape()) + " differs from past_cache " +
                               ShapeToString(past->shape()) + " outside the sequence axis");
      }
    }
    const int64_t batch = past->dim(0);
    const int64_t max_seq = past->dim(axis);
    const int64_t seq = update->dim(axis);
    if (seq > max_seq) {
      return InvalidArgument("update's sequence length " + std::to_string(seq) + " exceeds the cache's " +
                             std::to_string(max_seq));
    }
    std::vector<int64_t> write(static_cast<size_t>(batch), 0);
    if (const Tensor* w = ctx.input_tensor(2); w != nullptr) {
      ONNXFLOW_ASSIGN_OR_RETURN(write, ReadInt64s(*w, "input 'write_indices'"));
      if (static_cast<int64_t>(write.size()) != batch) {
        return InvalidArgument("input 'write_indices' has " + std::to_string(write.size()) + " entries for batch " +
                               std::to_string(batch));
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t w = write[b];
      if (w < 0 || (!circular_ && w + seq > max_seq) || (circular_ && w >= INT64_MAX - seq)) {
        return OutOfRange("input 'write_indices': index " + std::to_string(w) + " for batch " + std::to_string(b) +
                          " does not fit " + std::to_string(seq) + " updates into a sequence of " +
                          std::to_string(max_seq));
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, CopyOfData(ctx, *past));
    if (update->size() == 0) return Status::Ok();
    const int64_t inner = SizeFromDim(past->shape(), axis + 1);
    const int64_t prefix = SizeToDim(past->shape(), axis);  // batch and the dims before the axis
    const int64_t per_batch = prefix / batch;
    return DispatchBySize(past->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = update->data<T>();
      T* dst = out->mutable_data<T>();
      ParallelFor(ctx, prefix, seq * inner, [&](int64_t lo, int64_t hi) {
        for (int64_t p = lo; p < hi; ++p) {
          const int64_t w = write[p / per_batch];
          for (int64_t s = 0; s < seq; ++s) {
            int64_t at = w + s;
            if (circular_) at %= max_seq;
            std::copy_n(src + (p * seq + s) * inner, inner, dst + (p * max_seq + at) * inner);
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  int64_t axis_;
  bool circular_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterScatterKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Scatter", 9, kOpenEnded, Make<ScatterElementsKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "ScatterElements", 11, kOpenEnded, Make<ScatterElementsKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "ScatterND", 11, kOpenEnded, Make<ScatterNDKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "TensorScatter", 24, kOpenEnded, Make<TensorScatterKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
