// MaxRoiPool (1, 22): for each region [batch, x1, y1, x2, y2] of `rois` (scaled by spatial_scale
// and rounded), the max over each of pooled_shape = [ph, pw] bins of x = [N, C, H, W]. Bins are
// floor/ceil splits of the region; an empty bin gives 0 (the Caffe/Fast R-CNN rules).
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/numeric.h"
#include "ops/framework/shape.h"
#include "ops/nn/register.h"

namespace onnxflow {
namespace {

class MaxRoiPoolKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    std::vector<int64_t> pooled = info.GetInts("pooled_shape");
    if (pooled.size() != 2 || pooled[0] <= 0 || pooled[1] <= 0) {
      return InvalidArgument("attribute 'pooled_shape' must hold two positive values");
    }
    return std::unique_ptr<OpKernel>(new MaxRoiPoolKernel(pooled[0], pooled[1], info.GetFloat("spatial_scale", 1.0f)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* rois, ctx.RequireTensor(1));
    if (x->rank() != 4) return InvalidArgument("input 'X' must be [N, C, H, W], got " + ShapeToString(x->shape()));
    if (rois->rank() != 2 || rois->dim(1) != 5 || rois->dtype() != x->dtype()) {
      return InvalidArgument("input 'rois' must be [num_rois, 5] of X's type, got " + ShapeToString(rois->shape()));
    }
    const int64_t n = x->dim(0), c = x->dim(1), h = x->dim(2), w = x->dim(3), num = rois->dim(0);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor* y, ctx.Allocate(0, x->dtype(), {num, c, ph_, pw_}));
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* in = x->data<T>();
      const T* r = rois->data<T>();
      T* out = y->mutable_data<T>();
      for (int64_t i = 0; i < num; ++i) {
        const double batch_value = ToCompute(r[i * 5]);
        const int64_t batch = static_cast<int64_t>(batch_value);
        if (!(batch_value >= 0) || batch >= n) {
          return OutOfRange("roi " + std::to_string(i) + " has batch index " + std::to_string(batch_value) +
                            " outside [0, " + std::to_string(n) + ")");
        }
        const int64_t x1 = std::llround(ToCompute(r[i * 5 + 1]) * scale_);
        const int64_t y1 = std::llround(ToCompute(r[i * 5 + 2]) * scale_);
        const int64_t x2 = std::llround(ToCompute(r[i * 5 + 3]) * scale_);
        const int64_t y2 = std::llround(ToCompute(r[i * 5 + 4]) * scale_);
        const double bin_h = static_cast<double>(std::max<int64_t>(y2 - y1 + 1, 1)) / ph_;
        const double bin_w = static_cast<double>(std::max<int64_t>(x2 - x1 + 1, 1)) / pw_;
        for (int64_t ch = 0; ch < c; ++ch) {
          const T* plane = in + (batch * c + ch) * h * w;
          T* dst = out + (i * c + ch) * ph_ * pw_;
          for (int64_t py = 0; py < ph_; ++py) {
            const int64_t hs = std::clamp<int64_t>(static_cast<int64_t>(std::floor(py * bin_h)) + y1, 0, h);
            const int64_t he = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((py + 1) * bin_h)) + y1, 0, h);
            for (int64_t px = 0; px < pw_; ++px) {
              const int64_t ws = std::clamp<int64_t>(static_cast<int64_t>(std::floor(px * bin_w)) + x1, 0, w);
              const int64_t we = std::clamp<int64_t>(static_cast<int64_t>(std::ceil((px + 1) * bin_w)) + x1, 0, w);
              double best = -std::numeric_limits<double>::infinity();
              bool any = false;
              for (int64_t yy = hs; yy < he; ++yy) {
                for (int64_t xx = ws; xx < we; ++xx) {
                  best = std::max<double>(best, static_cast<double>(ToCompute(plane[yy * w + xx])));
                  any = true;
                }
              }
              dst[py * pw_ + px] = FromCompute<T>(static_cast<ComputeType<T>>(any ? best : 0.0));
            }
          }
        }
      }
      return Status::Ok();
    });
  }

 private:
  MaxRoiPoolKernel(int64_t ph, int64_t pw, float scale) : ph_(ph), pw_(pw), scale_(scale) {}
  int64_t ph_, pw_;
  float scale_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMaxRoiPool(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "MaxRoiPool", 1, kOpenEnded, Make<MaxRoiPoolKernel>());
}

}  // namespace onnxflow
