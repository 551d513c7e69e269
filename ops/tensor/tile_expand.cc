// Tile and Expand: outputs whose every row (last dim) is built from one input row, repeated
// (Tile) or broadcast (Expand).
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/tensor/register.h"
#include "ops/tensor/tensor_util.h"

namespace onnxflow {
namespace tensor_ops {
namespace {

// out[o] = in[o mod in.shape] per axis.
Status TileTo(KernelContext& ctx, const Tensor& x, const Shape& out_shape) {
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, x.dtype(), out_shape));
  if (out->size() == 0) return Status::Ok();
  const int64_t rank = x.rank();
  if (rank == 0) return DispatchBySize(x.dtype(), [&](auto tag) {
      using T = decltype(tag);
      out->mutable_data<T>()[0] = x.data<T>()[0];
      return Status::Ok();
    });
  const std::vector<int64_t> strides = Strides(x.shape());
  const int64_t cols = out_shape[rank - 1];
  const int64_t in_cols = x.dim(rank - 1);
  const int64_t rows = out->size() / cols;
  return DispatchBySize(x.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* src = x.data<T>();
    T* dst = out->mutable_data<T>();
    ParallelFor(ctx, rows, cols, [&](int64_t b, int64_t e) {
      for (int64_t row = b; row < e; ++row) {
        int64_t rest = row, offset = 0;
        for (int64_t d = rank - 2; d >= 0; --d) {
          offset += (rest % out_shape[d]) % x.dim(d) * strides[d];
          rest /= out_shape[d];
        }
        T* out_row = dst + row * cols;
        for (int64_t j = 0; j < cols; j += in_cols) std::copy_n(src + offset, in_cols, out_row + j);
      }
    });
    return Status::Ok();
  });
}

// Tile-1: (input, tiles, axis) repeats one axis; Tile-6+: (input, repeats) one count per axis.
class TileKernel : public OpKernel {
 public:
  explicit TileKernel(const KernelInfo& info) : single_axis_(info.opset() < 6) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* repeats_t, ctx.RequireTensor(1));
    const int64_t rank = x->rank();
    std::vector<int64_t> repeats(rank, 1);
    if (single_axis_) {
      ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* axis_t, ctx.RequireTensor(2));
      ONNXFLOW_ASSIGN_OR_RETURN(const int64_t tiles, ReadScalarInt(*repeats_t, "input 'tiles'"));
      ONNXFLOW_ASSIGN_OR_RETURN(const int64_t axis_value, ReadScalarInt(*axis_t, "input 'axis'"));
      ONNXFLOW_ASSIGN_OR_RETURN(const int64_t axis, NormalizeAxis(axis_value, rank));
      repeats[axis] = tiles;
    } else {
      ONNXFLOW_ASSIGN_OR_RETURN(repeats, ReadInt64s(*repeats_t, "input 'repeats'"));
      if (static_cast<int64_t>(repeats.size()) != rank) {
        return InvalidArgument("input 'repeats' has " + std::to_string(repeats.size()) + " entries for rank " +
                               std::to_string(rank));
      }
    }
    Shape out_shape(rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (repeats[d] < 0) return InvalidArgument("input 'repeats' has a negative count " + std::to_string(repeats[d]));
      if (x->dim(d) != 0 && repeats[d] > INT64_MAX / x->dim(d)) {
        return InvalidArgument("input 'repeats' makes axis " + std::to_string(d) + " too large");
      }
      out_shape[d] = x->dim(d) * repeats[d];
    }
    ONNXFLOW_RETURN_IF_ERROR(CheckedElementCount(out_shape).status());
    return TileTo(ctx, *x, out_shape);
  }

 private:
  bool single_axis_;
};

// Expand: numpy broadcast of the input against `shape` (either side may have the 1s).
class ExpandKernel : public OpKernel {
 public:
  explicit ExpandKernel(const KernelInfo&) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* shape_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape requested, ReadInt64s(*shape_t, "input 'shape'"));
    for (int64_t d : requested) {
      if (d < 0) return InvalidArgument("input 'shape' has a negative dim " + std::to_string(d));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Shape out_shape, BroadcastShapes(x->shape(), requested));
    ONNXFLOW_RETURN_IF_ERROR(CheckedElementCount(out_shape).status());
    if (out_shape == x->shape()) {
      ctx.SetOutput(0, Value(*x));
      return Status::Ok();
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * out, ctx.Allocate(0, x->dtype(), out_shape));
    if (out->size() == 0) return Status::Ok();
    const int64_t rank = static_cast<int64_t>(out_shape.size());
    const std::vector<int64_t> strides = BroadcastStrides(x->shape(), out_shape);
    const int64_t cols = out_shape[rank - 1];
    const int64_t rows = out->size() / cols;
    const int64_t col_stride = strides[rank - 1];
    return DispatchBySize(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* src = x->data<T>();
      T* dst = out->mutable_data<T>();
      ParallelFor(ctx, rows, cols, [&](int64_t b, int64_t e) {
        for (int64_t row = b; row < e; ++row) {
          int64_t rest = row, offset = 0;
          for (int64_t d = rank - 2; d >= 0; --d) {
            offset += (rest % out_shape[d]) * strides[d];
            rest /= out_shape[d];
          }
          T* out_row = dst + row * cols;
          if (col_stride == 0) {
            std::fill_n(out_row, cols, src[offset]);
          } else {
            std::copy_n(src + offset, cols, out_row);
          }
        }
      });
      return Status::Ok();
    });
  }
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterTileExpandKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Tile", 1, kOpenEnded, Make<TileKernel>()));
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Expand", 8, kOpenEnded, Make<ExpandKernel>()));
  return Status::Ok();
}

}  // namespace tensor_ops
}  // namespace onnxflow
