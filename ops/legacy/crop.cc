// Crop (experimental, opsets 1-9): cuts a window out of each [H, W] plane of an [N, C, H, W]
// tensor. border = (left, top, right, bottom); without `scale` the window drops those borders,
// with scale = (height, width) it is that size, starting at (top, left). The element type only
// moves, so every fixed-size type is taken (the spec lists the float types).
#include <cstring>
#include <string>
#include <vector>

#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/legacy/register.h"

namespace onnxflow {
namespace legacy {
namespace {

class CropKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<CropKernel>();
    k->border_ = info.GetInts("border");
    k->scale_ = info.GetInts("scale");
    if (k->border_.size() != 4) {
      return InvalidArgument("attribute 'border' must hold 4 values (left, top, right, bottom), got " +
                             std::to_string(k->border_.size()));
    }
    if (!k->scale_.empty() && k->scale_.size() != 2) {
      return InvalidArgument("attribute 'scale' must hold 2 values (height, width), got " +
                             std::to_string(k->scale_.size()));
    }
    for (int64_t v : k->border_) {
      if (v < 0) return InvalidArgument("attribute 'border' must not be negative");
    }
    for (int64_t v : k->scale_) {
      if (v < 0) return InvalidArgument("attribute 'scale' must not be negative");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() != 4) return InvalidArgument("input must be [N, C, H, W], got " + ShapeToString(x->shape()));
    if (x->dtype() == DataType::kString || ElementSize(x->dtype()) == 0) {
      return InvalidArgument(std::string("Crop does not take ") + DataTypeName(x->dtype()));
    }
    const int64_t h = x->dim(2), w = x->dim(3);
    const int64_t left = border_[0], top = border_[1], right = border_[2], bottom = border_[3];
    // Each bound is checked before it is summed: attribute values up to INT64_MAX cannot wrap.
    if (top > h || bottom > h - top) {
      return InvalidArgument("top and bottom borders (" + std::to_string(top) + ", " + std::to_string(bottom) +
                             ") exceed the height " + std::to_string(h));
    }
    if (left > w || right > w - left) {
      return InvalidArgument("left and right borders (" + std::to_string(left) + ", " + std::to_string(right) +
                             ") exceed the width " + std::to_string(w));
    }
    int64_t out_h = h - top - bottom, out_w = w - left - right;
    if (!scale_.empty()) {
      if (scale_[0] > h - top || scale_[1] > w - left) {
        return InvalidArgument("a crop of " + std::to_string(scale_[0]) + " x " + std::to_string(scale_[1]) +
                               " at (top " + std::to_string(top) + ", left " + std::to_string(left) +
                               ") does not fit in " + std::to_string(h) + " x " + std::to_string(w));
      }
      out_h = scale_[0];
      out_w = scale_[1];
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), {x->dim(0), x->dim(1), out_h, out_w}));
    if (y->size() == 0) return Status::Ok();
    const size_t elem = ElementSize(x->dtype());
    const char* src = static_cast<const char*>(x->raw_data());
    char* dst = static_cast<char*>(y->mutable_raw_data());
    const int64_t planes = x->dim(0) * x->dim(1);
    ParallelFor(ctx, planes, out_h * out_w, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        for (int64_t r = 0; r < out_h; ++r) {
          const int64_t from = (p * h + top + r) * w + left;
          std::memcpy(dst + ((p * out_h + r) * out_w) * elem, src + from * elem, static_cast<size_t>(out_w) * elem);
        }
      }
    });
    return Status::Ok();
  }

 private:
  std::vector<int64_t> border_;  // left, top, right, bottom
  std::vector<int64_t> scale_;   // height, width; empty: drop the borders
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterCrop(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Crop", 1, kLastLegacyOpset, Make<CropKernel>());
}

}  // namespace legacy
}  // namespace onnxflow
