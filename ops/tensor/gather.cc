// Gather, GatherElements, GatherND: read elements (or blocks) at indices taken from data. Every
// index is checked (negative ones count from the end) before anything is read.
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/tensor/indices.h"
#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

// out[outer, j, inner] = data[outer, indices[j], inner].
class GatherKernel : public OpKernel {
 public:
  explicit GatherKernel(const KernelInfo& info) : axis_(info.GetInt("axis", 0)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* indices_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, data->rank()));
    const int64_t dim = data->dim(axis);
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> indices, NormalizedIndices(*indices_t, dim));
    Shape out_shape(data->shape().begin(), data->shape().begin() + axis);
    out_shape.insert(out_shape.end(), indices_t->shape().begin(), indices_t->shape().end());
    out_shape.insert(out_shape.end(), data->shape().begin() + axis + 1, data->shape().end());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, data->dtype(), out_shape));
    if (out->size() == 0) return Status::Ok();
    const int64_t outer = SizeToDim(data->shape(), axis);
    const int64_t inner = SizeFromDim(data->shape(), axis + 1);
    const int64_t n = static_cast<int64_t>(indices.size());
    return DispatchBySize(data->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = data->data<T>();
      T* dst = out->mutable_data<T>();
      ParallelFor(ctx, outer * n, inner, [&](int64_t b, int64_t e) {
        for (int64_t item = b; item < e; ++item) {
          const int64_t o = item / n, j = item % n;
          const T* from = src + (o * dim + indices[j]) * inner;
          if (inner == 1) {
            dst[item] = *from;
          } else {
            std::copy_n(from, inner, dst + item * inner);
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  int64_t axis_;
};

// out[i0, ..., ik, ...] = data[i0, ..., indices[i0, ..., ik, ...], ...] along `axis`.
class GatherElementsKernel : public OpKernel {
 public:
  explicit GatherElementsKernel(const KernelInfo& info) : axis_(info.GetInt("axis", 0)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* indices_t, ctx.RequireTensor(1));
    const int64_t rank = data->rank();
    ONNXFLOW_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_, rank));
    ONNXFLOW_RETURN_IF_ERROR(CheckElementsIndicesShape(*data, *indices_t, axis));
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> indices, NormalizedIndices(*indices_t, data->dim(axis)));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, data->dtype(), indices_t->shape()));
    if (out->size() == 0) return Status::Ok();
    const std::vector<int64_t> strides = Strides(data->shape());
    const Shape& ishape = indices_t->shape();
    const int64_t cols = ishape[rank - 1];
    const int64_t rows = out->size() / cols;
    return DispatchBySize(data->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = data->data<T>();
      T* dst = out->mutable_data<T>();
      ParallelFor(ctx, rows, cols, [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          // Offset of the row's start in data, with the axis coordinate left out.
          int64_t rest = row, base = 0;
          for (int64_t d = rank - 2; d >= 0; --d) {
            const int64_t i = rest % ishape[d];
            rest /= ishape[d];
            if (d != axis) base += i * strides[d];
          }
          const int64_t* idx = indices.data() + row * cols;
          T* out_row = dst + row * cols;
          if (axis == rank - 1) {
            for (int64_t j = 0; j < cols; ++j) out_row[j] = src[base + idx[j]];
          } else {
            for (int64_t j = 0; j < cols; ++j) out_row[j] = src[base + j + idx[j] * strides[axis]];
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  int64_t axis_;
};

// GatherND with batch_dims b: each index tuple (the last dim of indices, length k) picks a block
// data[batch, i1..ik, ...] of size prod(data.shape[b+k:]).
class GatherNDKernel : public OpKernel {
 public:
  explicit GatherNDKernel(const KernelInfo& info) : batch_dims_(info.GetInt("batch_dims", 0)) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* data, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* indices_t, ctx.RequireTensor(1));
    const int64_t r = data->rank(), q = indices_t->rank(), b = batch_dims_;
    if (q < 1 || r < 1) return InvalidArgument("data and indices must have rank >= 1");
    if (b < 0 || b >= std::min(q, r)) {
      return InvalidArgument("batch_dims " + std::to_string(b) + " must be less than the ranks of data and indices");
    }
    for (int64_t d = 0; d < b; ++d) {
      if (data->dim(d) != indices_t->dim(d)) {
        return InvalidArgument("batch dims of data " + ShapeToString(data->shape()) + " and indices " +
                               ShapeToString(indices_t->shape()) + " differ");
      }
    }
    const int64_t k = indices_t->dim(q - 1);
    if (k > r - b) {
      return InvalidArgument("indices' last dim " + std::to_string(k) + " exceeds data rank - batch_dims = " +
                             std::to_string(r - b));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(std::vector<int64_t> raw, ReadIndices(*indices_t));
    Shape out_shape(indices_t->shape().begin(), indices_t->shape().end() - 1);
    out_shape.insert(out_shape.end(), data->shape().begin() + b + k, data->shape().end());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, data->dtype(), out_shape));
    // Allocating first bounds `tuples` (the output holds tuples * block elements).
    if (out->size() == 0) return Status::Ok();
    const int64_t tuples = SizeToDim(indices_t->shape(), q - 1);  // over all batches
    const int64_t block = SizeFromDim(data->shape(), b + k);
    ONNXFLOW_ASSIGN_OR_RETURN(const std::vector<int64_t> offsets, TupleOffsets(*data, raw, tuples, k, b));
    return DispatchBySize(data->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = data->data<T>();
      T* dst = out->mutable_data<T>();
      ParallelFor(ctx, tuples, block, [&](int64_t lo, int64_t hi) {
        for (int64_t t = lo; t < hi; ++t) std::copy_n(src + offsets[t], block, dst + t * block);
      });
      return Status::Ok();
    });
  }

 private:
  int64_t batch_dims_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterGatherKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Gather", 1, kOpenEnded, Make<GatherKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "GatherElements", 11, kOpenEnded, Make<GatherElementsKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "GatherND", 11, kOpenEnded, Make<GatherNDKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
