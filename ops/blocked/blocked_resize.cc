#include "ops/blocked/blocked_resize.h"

#include <cmath>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/blocked/blocked_layout.h"
#include "ops/cast/half_simd.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/image/resize_bilinear.h"
#include "ops/image/resize_tables.h"

namespace onnxflow {
namespace {

using image::AxisSampling;
using image::CoordinateMode;
using image::ResizeMode;

// The output size and scale of one spatial axis: Resize's stretch rule, from `sizes` (scale
// out / in) or from `scales` (out = floor(in * scale)).
struct SpatialAxis {
  int64_t in = 0, out = 0;
  double scale = 1.0;       // the tables' (double, as the spec's formulas)
  float float_scale = 1.0;  // ONNX Runtime's bilinear arithmetic's
};

// Input rows of float16 bits widened to float for the bilinear arithmetic, which is float's. It
// keeps the last two rows it widened: consecutive output rows read the same pair of input rows or
// the next pair (an upscale by 2 reads each row for about 4 output rows), so each row is widened
// about once per work item rather than twice per output row.
class WidenedRows {
 public:
  explicit WidenedRows(int64_t row_floats)
      : row_floats_(row_floats), rows_{std::vector<float>(row_floats), std::vector<float>(row_floats)} {}

  // `row` as floats: from the slot that holds it, or widened into the slot used less recently
  // (never the one the other row of the same output holds, which was used last).
  const float* Get(const uint16_t* row) {
    int slot = row == source_[0] ? 0 : row == source_[1] ? 1 : -1;
    if (slot < 0) {
      slot = 1 - last_;
      HalfToFloatArray(row, rows_[slot].data(), row_floats_);
      source_[slot] = row;
    }
    last_ = slot;
    return rows_[slot].data();
  }

 private:
  int64_t row_floats_;
  std::vector<float> rows_[2];
  const uint16_t* source_[2] = {nullptr, nullptr};
  int last_ = 1;
};

class BlockedResizeKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<BlockedResizeKernel>(new BlockedResizeKernel());
    ONNXFLOW_ASSIGN_OR_RETURN(k->sampling_.mode, image::ParseResizeMode(info.GetString("mode", "nearest")));
    ONNXFLOW_ASSIGN_OR_RETURN(k->sampling_.coordinate, image::ParseCoordinateMode(info.GetString(
                                                            "coordinate_transformation_mode", "half_pixel")));
    ONNXFLOW_ASSIGN_OR_RETURN(k->sampling_.nearest,
                              image::ParseNearestMode(info.GetString("nearest_mode", "round_prefer_floor")));
    k->channels_ = info.GetInt("channels", 0);
    const bool linear = k->sampling_.mode == ResizeMode::kLinear;
    if ((!linear && k->sampling_.mode != ResizeMode::kNearest) ||
        (linear && !image::BilinearCoordinateSupported(k->sampling_.coordinate)) ||
        k->sampling_.coordinate == CoordinateMode::kTfCropAndResize || k->channels_ <= 0) {
      return Unimplemented("BlockedResize: a mode, coordinate mode or channel count it does not run");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatOrHalf(*x, "BlockedResize", "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(const Shape nchw, UnblockedShape(x->shape(), "X"));
    SpatialAxis rows{nchw[2]}, cols{nchw[3]};
    ONNXFLOW_RETURN_IF_ERROR(Axes(ctx, nchw, &rows, &cols));
    const int64_t blocks = x->dim(1);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(
                                              0, x->dtype(), {nchw[0], blocks, rows.out, cols.out, kChannelBlock}));
    if (y->size() == 0) return Status::Ok();
    if (rows.in == 0 || cols.in == 0) return InvalidArgument("BlockedResize: cannot resize an empty image");
    if (x->dtype() == DataType::kFloat16) {  // float16 bits
      Resize(ctx, nchw[0] * blocks, rows, cols, x->data<uint16_t>(), y->mutable_data<uint16_t>());
    } else {
      Resize(ctx, nchw[0] * blocks, rows, cols, x->data<float>(), y->mutable_data<float>());
    }
    return Status::Ok();
  }

 private:
  BlockedResizeKernel() = default;

  // `planes` channel blocks (images x blocks) resized, X and Y of type T: float, or the bits of
  // float16 (a float16 model's activations). Nearest copies pixels whatever their type; linear
  // computes in float, on the widened rows, and rounds each output to nearest even once, so a
  // float16 Y is the float kernel's result on the widened X, rounded.
  template <typename T>
  void Resize(KernelContext& ctx, int64_t planes, const SpatialAxis& rows, const SpatialAxis& cols, const T* xd,
              T* yd) const {
    const int64_t in_plane = rows.in * cols.in * kChannelBlock, out_row = cols.out * kChannelBlock;
    if (sampling_.mode == ResizeMode::kNearest) {
      const image::AxisTable r = image::BuildAxisTable(sampling_, rows.in, rows.out, rows.scale);
      const image::AxisTable c = image::BuildAxisTable(sampling_, cols.in, cols.out, cols.scale);
      ParallelFor(ctx, planes * rows.out, out_row, [&](int64_t i0, int64_t i1) {
        for (int64_t i = i0; i < i1; ++i) {
          const T* src = xd + i / rows.out * in_plane + r.index[i % rows.out] * cols.in * kChannelBlock;
          T* dst = yd + i * out_row;
          for (int64_t o = 0; o < cols.out; ++o) {
            std::memcpy(dst + o * kChannelBlock, src + c.index[o] * kChannelBlock, kChannelBlock * sizeof(T));
          }
        }
      });
      return;
    }
    const image::BilinearAxis r = image::BuildBilinearAxis(sampling_.coordinate, rows.in, rows.out, rows.float_scale);
    const image::BilinearAxis c = image::BuildBilinearAxis(sampling_.coordinate, cols.in, cols.out, cols.float_scale);
    const int64_t in_row = cols.in * kChannelBlock;
    // About 8 operations per output, as the plain kernel counts them.
    ParallelFor(ctx, planes * rows.out, out_row * 8, [&](int64_t i0, int64_t i1) {
      constexpr bool kHalf = std::is_same_v<T, uint16_t>;
      WidenedRows widened(kHalf ? in_row : 0);
      std::vector<float> out(kHalf ? out_row : 0);  // a float16 output row before it is rounded
      for (int64_t i = i0; i < i1; ++i) {
        const int64_t o = i % rows.out;
        const T* plane = xd + i / rows.out * in_plane;
        if constexpr (kHalf) {
          const float* lo = widened.Get(plane + r.lo[o] * in_row);
          const float* hi = widened.Get(plane + r.hi[o] * in_row);
          image::BilinearBlockedRowF32(lo, hi, r.w_lo[o], r.w_hi[o], c, kChannelBlock, out.data());
          FloatToHalfArray(out.data(), yd + i * out_row, out_row);
        } else {
          image::BilinearBlockedRowF32(plane + r.lo[o] * in_row, plane + r.hi[o] * in_row, r.w_lo[o], r.w_hi[o], c,
                                       kChannelBlock, yd + i * out_row);
        }
      }
    });
  }

  // The spatial axes' sizes and scales from input 1 (scales) or 2 (sizes), which must keep N and C.
  Status Axes(const KernelContext& ctx, const Shape& nchw, SpatialAxis* rows, SpatialAxis* cols) const {
    const Tensor* scales = ctx.input_tensor(1);
    const Tensor* sizes = ctx.input_tensor(2);
    const bool have_scales = scales != nullptr && scales->size() > 0, have_sizes = sizes != nullptr && sizes->size() > 0;
    if (have_scales == have_sizes) return InvalidArgument("BlockedResize: give one of 'scales' and 'sizes'");
    if (have_sizes) {
      if (sizes->dtype() != DataType::kInt64 || sizes->size() != 4) {
        return InvalidArgument("BlockedResize: 'sizes' must be 4 int64 values");
      }
      const int64_t* s = sizes->data<int64_t>();
      if (s[0] != nchw[0] || s[1] != channels_ || s[2] < 0 || s[3] < 0) {
        return InvalidArgument("BlockedResize: 'sizes' " + ShapeToString({s[0], s[1], s[2], s[3]}) +
                               " must keep N and C of " + ShapeToString({nchw[0], channels_, nchw[2], nchw[3]}));
      }
      for (auto [axis, out] : {std::pair{rows, s[2]}, std::pair{cols, s[3]}}) {
        axis->out = out;
        if (axis->in == 0) continue;
        axis->scale = static_cast<double>(out) / static_cast<double>(axis->in);
        axis->float_scale = static_cast<float>(out) / static_cast<float>(axis->in);
      }
      return Status::Ok();
    }
    if (scales->dtype() != DataType::kFloat || scales->size() != 4) {
      return InvalidArgument("BlockedResize: 'scales' must be 4 float values");
    }
    const float* s = scales->data<float>();
    if (s[0] != 1.0f || s[1] != 1.0f) return InvalidArgument("BlockedResize: 'scales' must keep N and C");
    for (auto [axis, scale] : {std::pair{rows, s[2]}, std::pair{cols, s[3]}}) {
      if (!(scale > 0) || !std::isfinite(scale)) return InvalidArgument("BlockedResize: 'scales' must be positive");
      const double out = std::floor(static_cast<double>(axis->in) * scale);
      if (out > 1e12) return InvalidArgument("BlockedResize: 'scales' make the output too large");
      axis->out = static_cast<int64_t>(out);
      axis->scale = scale;
      axis->float_scale = scale;
    }
    return Status::Ok();
  }

  AxisSampling sampling_;
  int64_t channels_ = 0;
};

class BlockedShapeKernel : public OpKernel {
 public:
  BlockedShapeKernel(int64_t channels, int64_t start, int64_t end) : channels_(channels), start_(start), end_(end) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape nchw, UnblockedShape(x->shape(), "X"));
    nchw[1] = channels_;
    // Shape-15's start and end: negative from the back, clamped to [0, rank].
    auto clamp = [](int64_t v) { return std::min<int64_t>(4, std::max<int64_t>(0, v < 0 ? v + 4 : v)); };
    const int64_t b = clamp(start_), e = std::max(b, clamp(end_));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kInt64, {e - b}));
    std::copy(nchw.begin() + b, nchw.begin() + e, y->mutable_data<int64_t>());
    return Status::Ok();
  }

 private:
  int64_t channels_, start_, end_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBlockedResize(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxflowDomain, internal_ops::kBlockedResize, internal_ops::kVersion,
                                             kOpenEnded, BlockedResizeKernel::Create));
  return registry.Register(kOnnxflowDomain, internal_ops::kBlockedShape, internal_ops::kVersion, kOpenEnded,
                           [](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
                             const int64_t channels = info.GetInt("channels", 0);
                             if (channels <= 0) return Unimplemented("BlockedShape: no channel count");
                             return std::unique_ptr<OpKernel>(new BlockedShapeKernel(
                                 channels, info.GetInt("start", 0), info.GetInt("end", 4)));
                           });
}

}  // namespace onnxflow
