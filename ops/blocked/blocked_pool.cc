// com.onnxflow BlockedMaxPool, BlockedAveragePool (2-D, the attributes of MaxPool/AveragePool
// without Indices) and BlockedGlobalAveragePool, BlockedGlobalMaxPool: the pools on a
// channel-blocked X [N, C/16, H, W, 16], giving Y blocked the same way. X is float or float16 (a
// float16 model's activations) and Y has its type; float16 is pooled in float and rounded once on
// store, so Y is the float pool's result on the widened X, rounded to nearest even.
//
// Work is split over (image, block, output row); per output pixel the taps inside the image are
// known in advance, so padding is skipped as in the plain pools (max ignores it, average divides by
// the taps inside the image, or with count_include_pad inside the padded image).
#include "ops/blocked/blocked_pool.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/blocked/blocked_pool.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/blocked/blocked_pool-inl.h"

#if HWY_ONCE

#include <vector>

#include "ops/blocked/blocked_layout.h"
#include "ops/blocked/blocked_pool_row.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/nn/pool_geometry.h"

namespace onnxflow {

HWY_EXPORT(PoolRowImpl);
HWY_EXPORT(PoolRowHalfImpl);
HWY_EXPORT(ReducePixelsImpl);
HWY_EXPORT(ReducePixelsHalfImpl);

void RunBlockedPoolRow(const BlockedPoolRow<float>& row) { HWY_DYNAMIC_DISPATCH(PoolRowImpl)(row); }
void RunBlockedPoolRow(const BlockedPoolRow<hwy::float16_t>& row) { HWY_DYNAMIC_DISPATCH(PoolRowHalfImpl)(row); }
void ReduceBlockedPixels(const float* block, int64_t pixels, bool max, float* out) {
  HWY_DYNAMIC_DISPATCH(ReducePixelsImpl)(block, pixels, max, out);
}
void ReduceBlockedPixels(const hwy::float16_t* block, int64_t pixels, bool max, hwy::float16_t* out) {
  HWY_DYNAMIC_DISPATCH(ReducePixelsHalfImpl)(block, pixels, max, out);
}

namespace {

// The taps of one window along one axis: the first input position inside, how many are inside,
// and how many are inside the padded input (count_include_pad).
struct AxisWindow {
  int64_t first = 0, inside = 0, with_pad = 0;
};

std::vector<AxisWindow> AxisWindows(const PoolGeometry& g, size_t axis) {
  std::vector<AxisWindow> windows(static_cast<size_t>(g.out[axis]));
  for (int64_t o = 0; o < g.out[axis]; ++o) {
    const WindowTaps t = TapsOf(g, axis, o);
    windows[static_cast<size_t>(o)] = {t.start + t.lo * g.dilations[axis], t.inside(), t.with_pad};
  }
  return windows;
}

class BlockedPoolKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, bool max) {
    ONNXFLOW_ASSIGN_OR_RETURN(PoolAttributes attrs, PoolAttributes::Parse(info));
    if (attrs.kernel.size() != 2) return InvalidArgument("Blocked pools are 2-D");
    if (info.output_count() > 1) return InvalidArgument("BlockedMaxPool has no Indices output");
    return std::unique_ptr<OpKernel>(
        new BlockedPoolKernel(std::move(attrs), max, info.GetInt("count_include_pad", 0) != 0));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatOrHalf(*x, max_ ? "BlockedMaxPool" : "BlockedAveragePool", "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape nchw, UnblockedShape(x->shape(), "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(PoolGeometry g, ComputePoolGeometry(attrs_, nchw));
    const Shape y_shape = {nchw[0], x->dim(1), g.out[0], g.out[1], kChannelBlock};
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), y_shape));
    if (y->size() == 0) return Status::Ok();
    if (x->dtype() == DataType::kFloat16) {
      Pool(ctx, g, x->dim(0) * x->dim(1), x->data<hwy::float16_t>(), y->mutable_data<hwy::float16_t>());
    } else {
      Pool(ctx, g, x->dim(0) * x->dim(1), x->data<float>(), y->mutable_data<float>());
    }
    return Status::Ok();
  }

 private:
  BlockedPoolKernel(PoolAttributes attrs, bool max, bool count_include_pad)
      : attrs_(std::move(attrs)), max_(max), count_include_pad_(count_include_pad) {}

  // The pool of `planes` channel blocks (images x blocks) of geometry `g`, X and Y of type T.
  template <typename T>
  void Pool(KernelContext& ctx, const PoolGeometry& g, int64_t planes, const T* xd, T* yd) const {
    const std::vector<AxisWindow> rows = AxisWindows(g, 0), cols = AxisWindows(g, 1);
    std::vector<int64_t> col_first, col_count;
    for (const AxisWindow& c : cols) {
      col_first.push_back(c.first);
      col_count.push_back(c.inside);
    }
    const int64_t out_h = g.out[0], out_w = g.out[1], in_plane = g.in[0] * g.in[1] * kChannelBlock;
    const int64_t out_plane = out_h * out_w * kChannelBlock;
    const int64_t taps = g.taps_estimate();
    ParallelFor(ctx, planes * out_h, out_w * taps * kChannelBlock, [&](int64_t r0, int64_t r1) {
      std::vector<float> scale(max_ ? 0 : static_cast<size_t>(out_w));
      std::vector<float> columns(static_cast<size_t>(g.in[1] * kChannelBlock));
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t plane = r / out_h, oh = r % out_h;
        const AxisWindow& wr = rows[static_cast<size_t>(oh)];
        BlockedPoolRow<T> row;
        row.plane = xd + plane * in_plane;
        row.in_w = g.in[1];
        row.row_first = wr.first;
        row.rows = wr.inside;
        row.row_step = g.dilations[0];
        row.col_first = col_first.data();
        row.col_count = col_count.data();
        row.col_step = g.dilations[1];
        row.kernel_w = g.kernel[1];
        row.stride_w = g.strides[1];
        row.out_w = out_w;
        row.columns = columns.data();
        row.out = yd + plane * out_plane + oh * out_w * kChannelBlock;
        row.max = max_;
        if (!max_) {
          for (int64_t ow = 0; ow < out_w; ++ow) {
            const AxisWindow& wc = cols[static_cast<size_t>(ow)];
            const int64_t counted = count_include_pad_ ? wr.with_pad * wc.with_pad : wr.inside * wc.inside;
            scale[static_cast<size_t>(ow)] = 1.0f / static_cast<float>(counted);  // none: inf, 0 * inf = NaN
          }
          row.scale = scale.data();
        }
        RunBlockedPoolRow(row);
      }
    });
  }

  PoolAttributes attrs_;
  bool max_;
  bool count_include_pad_;
};

class BlockedGlobalPoolKernel : public OpKernel {
 public:
  explicit BlockedGlobalPoolKernel(bool max) : max_(max) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatOrHalf(*x, max_ ? "BlockedGlobalMaxPool" : "BlockedGlobalAveragePool", "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape nchw, UnblockedShape(x->shape(), "X"));
    const Shape y_shape = {nchw[0], x->dim(1), 1, 1, kChannelBlock};
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), y_shape));
    const int64_t pixels = nchw[2] * nchw[3];
    // X and Y of one type, float or hwy::float16_t.
    const auto reduce = [&](const auto* xd, auto* yd) {
      ParallelFor(ctx, x->dim(0) * x->dim(1), pixels * kChannelBlock, [&](int64_t b0, int64_t b1) {
        for (int64_t b = b0; b < b1; ++b) {
          ReduceBlockedPixels(xd + b * pixels * kChannelBlock, pixels, max_, yd + b * kChannelBlock);
        }
      });
    };
    if (x->dtype() == DataType::kFloat16) {
      reduce(x->data<hwy::float16_t>(), y->mutable_data<hwy::float16_t>());
    } else {
      reduce(x->data<float>(), y->mutable_data<float>());
    }
    return Status::Ok();
  }

 private:
  bool max_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBlockedPools(KernelRegistry& registry) {
  for (bool max : {true, false}) {
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(
        kOnnxflowDomain, max ? "BlockedMaxPool" : "BlockedAveragePool", 1, kOpenEnded,
        [max](const KernelInfo& info) { return BlockedPoolKernel::Create(info, max); }));
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(
        kOnnxflowDomain, max ? "BlockedGlobalMaxPool" : "BlockedGlobalAveragePool", 1, kOpenEnded,
        [max](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> {
          return std::unique_ptr<OpKernel>(new BlockedGlobalPoolKernel(max));
        }));
  }
  return Status::Ok();
}

}  // namespace onnxflow

#endif  // HWY_ONCE
