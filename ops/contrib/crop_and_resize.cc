// com.microsoft CropAndResize (version 1): TensorFlow's crop_and_resize on NCHW data, which
// tf2onnx writes for tf.image.crop_and_resize (the ROI heads of Mask R-CNN and other detectors).
// Each box [y1, x1, y2, x2] of rois, in coordinates normalized to [0, 1] over the image
// batch_indices names, is sampled on a crop_height x crop_width grid, bilinearly or at the nearest
// pixel, into [num_rois, C, crop_height, crop_width]. A sample outside the image takes
// extrapolation_value; y1 > y2 (or x1 > x2) flips the crop. Float only, as ONNX Runtime registers it.
//
// The coordinates are computed in ONNX Runtime's arithmetic (float, except the one-sample case's
// midpoint in double), so that samples on pixel edges round to the same pixels.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

#include "ops/contrib/register.h"
#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace contrib {
namespace {

// Where output sample `o` of `count` along one axis reads, in pixels of an axis of `extent`:
// the box's edges [start, end] map onto [0, extent - 1], the first and last samples land on them
// exactly, and a single sample takes the middle.
float SourceCoordinate(float start, float end, int64_t o, int64_t count, int64_t extent) {
  const float last = static_cast<float>(extent - 1);
  if (count == 1) return static_cast<float>(0.5 * static_cast<double>(start + end) * static_cast<double>(extent - 1));
  if (o == 0) return start * last;
  if (o == count - 1) return end * last;
  const float step = (end - start) * last / static_cast<float>(count - 1);
  return start * last + static_cast<float>(o) * step;
}

// Inside [0, extent - 1]; NaN (from a NaN box) is outside.
bool Inside(float c, int64_t extent) { return c >= 0.0f && c <= static_cast<float>(extent - 1); }

class CropAndResizeKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::string mode = info.GetString("mode", "bilinear");
    // ONNX Runtime takes the mode in any case.
    std::transform(mode.begin(), mode.end(), mode.begin(), [](unsigned char c) { return std::tolower(c); });
    if (mode != "bilinear" && mode != "nearest") {
      return InvalidArgument("CropAndResize: mode must be 'bilinear' or 'nearest', not '" + mode + "'");
    }
    return std::unique_ptr<OpKernel>(
        new CropAndResizeKernel(mode == "nearest", info.GetFloat("extrapolation_value", 0.0f)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* rois, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* batch_indices, ctx.RequireTensor(2));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* crop_size, ctx.RequireTensor(3));
    if (x->dtype() != DataType::kFloat || rois->dtype() != DataType::kFloat) {
      return InvalidArgument(std::string("CropAndResize: X and rois must be float, got ") + DataTypeName(x->dtype()) +
                             " and " + DataTypeName(rois->dtype()));
    }
    if (x->rank() != 4) {
      return InvalidArgument("CropAndResize: X must be 4-D (N, C, H, W), got shape " + ShapeToString(x->shape()));
    }
    if (rois->rank() != 2 || rois->dim(1) != 4) {
      return InvalidArgument("CropAndResize: rois must be [num_rois, 4], got shape " + ShapeToString(rois->shape()));
    }
    const int64_t num_rois = rois->dim(0);
    if (batch_indices->dtype() != DataType::kInt32 || batch_indices->rank() != 1 || batch_indices->dim(0) != num_rois) {
      return InvalidArgument("CropAndResize: batch_indices must be int32 [" + std::to_string(num_rois) +
                             "] (one per roi), got " + DataTypeName(batch_indices->dtype()) + " " +
                             ShapeToString(batch_indices->shape()));
    }
    if (crop_size->dtype() != DataType::kInt32 || crop_size->rank() != 1 || crop_size->size() != 2) {
      return InvalidArgument("CropAndResize: crop_size must be int32 [2] (crop_height, crop_width), got " +
                             std::string(DataTypeName(crop_size->dtype())) + " " + ShapeToString(crop_size->shape()));
    }
    const int64_t crop_h = crop_size->data<int32_t>()[0], crop_w = crop_size->data<int32_t>()[1];
    if (crop_h <= 0 || crop_w <= 0) {
      return InvalidArgument("CropAndResize: crop_size must be positive, got [" + std::to_string(crop_h) + ", " +
                             std::to_string(crop_w) + "]");
    }
    const int64_t batch = x->dim(0), channels = x->dim(1), height = x->dim(2), width = x->dim(3);
    const int32_t* image_of = batch_indices->data<int32_t>();
    for (int64_t r = 0; r < num_rois; ++r) {
      if (image_of[r] < 0 || image_of[r] >= batch) {
        return OutOfRange("CropAndResize: batch_indices[" + std::to_string(r) + "] = " +
                               std::to_string(image_of[r]) + " is out of range [0, " + std::to_string(batch) + ")");
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y,
                              ctx.AllocateUninitialized(0, DataType::kFloat, {num_rois, channels, crop_h, crop_w}));
    if (y->size() == 0) return Status::Ok();
    const float* image = x->data<float>();
    const float* boxes = rois->data<float>();
    float* out = y->mutable_data<float>();
    const int64_t plane = height * width, out_plane = crop_h * crop_w;
    // One output row (a roi's sample row, every channel) per item.
    ParallelFor(ctx, num_rois * crop_h, crop_w * channels * 4, [&](int64_t i0, int64_t i1) {
      for (int64_t item = i0; item < i1; ++item) {
        const int64_t r = item / crop_h, oy = item % crop_h;
        const float* box = boxes + r * 4;
        const float* src = image + image_of[r] * channels * plane;
        float* dst = out + r * channels * out_plane + oy * crop_w;
        const float in_y = SourceCoordinate(box[0], box[2], oy, crop_h, height);
        const bool row_inside = Inside(in_y, height);
        for (int64_t ox = 0; ox < crop_w; ++ox) {
          const float in_x = SourceCoordinate(box[1], box[3], ox, crop_w, width);
          if (!row_inside || !Inside(in_x, width)) {
            for (int64_t c = 0; c < channels; ++c) dst[c * out_plane + ox] = extrapolation_;
            continue;
          }
          if (nearest_) {
            const int64_t at = static_cast<int64_t>(std::round(in_y)) * width + static_cast<int64_t>(std::round(in_x));
            for (int64_t c = 0; c < channels; ++c) dst[c * out_plane + ox] = src[c * plane + at];
            continue;
          }
          const int64_t top = static_cast<int64_t>(std::floor(in_y)), bottom = static_cast<int64_t>(std::ceil(in_y));
          const int64_t left = static_cast<int64_t>(std::floor(in_x)), right = static_cast<int64_t>(std::ceil(in_x));
          const float y_lerp = in_y - static_cast<float>(top), x_lerp = in_x - static_cast<float>(left);
          for (int64_t c = 0; c < channels; ++c) {
            const float* p = src + c * plane;
            const float tl = p[top * width + left], tr = p[top * width + right];
            const float bl = p[bottom * width + left], br = p[bottom * width + right];
            const float upper = tl + (tr - tl) * x_lerp;
            const float lower = bl + (br - bl) * x_lerp;
            dst[c * out_plane + ox] = upper + (lower - upper) * y_lerp;
          }
        }
      }
    });
    return Status::Ok();
  }

 private:
  CropAndResizeKernel(bool nearest, float extrapolation) : nearest_(nearest), extrapolation_(extrapolation) {}

  bool nearest_;
  float extrapolation_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterCropAndResize(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "CropAndResize", 1, kOpenEnded, Make<CropAndResizeKernel>());
}

}  // namespace contrib
}  // namespace onnxflow
