// RoiAlign (opsets 10, 16, 22): pools each region of interest of a (N, C, H, W) feature map into
// an output_height x output_width grid of bins, averaging (or taking the max of) bilinear samples
// on a regular sampling grid inside each bin, as in Mask R-CNN and the ONNX reference:
//   - half_pixel (default from opset 16) shifts roi coordinates by -0.5; output_half_pixel (and
//     opset 10) does not, and stretches malformed rois to at least 1x1;
//   - samples more than one pixel outside the map contribute 0; others clamp to the border;
//   - max mode takes, per sample, the largest of the four weighted corner values (the reference's
//     definition), then the largest over the bin's samples.
// The sample positions and weights of one bin are computed once and shared by all channels.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/image/register.h"

namespace onnxflow {
namespace image {
namespace {

struct Sample {
  int64_t pos[4];
  double w[4];
};

// Samples per bin side at most, given or adaptive: a huge roi or sampling_ratio from a hostile
// model cannot ask for billions of samples per bin.
constexpr int64_t kMaxGrid = 1024;

class RoiAlignKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<RoiAlignKernel>();
    const std::string mode = info.GetString("mode", "avg");
    if (mode != "avg" && mode != "max") return InvalidArgument("RoiAlign mode must be avg or max, got '" + mode + "'");
    k->max_ = mode == "max";
    k->out_h_ = info.GetInt("output_height", 1);
    k->out_w_ = info.GetInt("output_width", 1);
    if (k->out_h_ <= 0 || k->out_w_ <= 0) return InvalidArgument("output_height and output_width must be positive");
    k->sampling_ratio_ = info.GetInt("sampling_ratio", 0);
    if (k->sampling_ratio_ < 0) return InvalidArgument("sampling_ratio must be >= 0");
    // The adaptive grid's bound (below) for a given one too: 2^31 asked for 2^62 samples per bin.
    if (k->sampling_ratio_ > kMaxGrid) {
      return InvalidArgument("sampling_ratio " + std::to_string(k->sampling_ratio_) + " is past " +
                             std::to_string(kMaxGrid) + " samples per bin side");
    }
    k->spatial_scale_ = info.GetFloat("spatial_scale", 1.0f);
    if (info.opset() >= 16) {
      const std::string ctm = info.GetString("coordinate_transformation_mode", "half_pixel");
      if (ctm != "half_pixel" && ctm != "output_half_pixel") {
        return InvalidArgument("unknown coordinate_transformation_mode '" + ctm + "'");
      }
      k->half_pixel_ = ctm == "half_pixel";
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* rois, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* batch, ctx.RequireTensor(2));
    if (x->rank() != 4) return InvalidArgument("X must be (N, C, H, W), got " + ShapeToString(x->shape()));
    if (rois->rank() != 2 || rois->dim(1) != 4) {
      return InvalidArgument("rois must be (num_rois, 4), got " + ShapeToString(rois->shape()));
    }
    if (batch->rank() != 1 || batch->dim(0) != rois->dim(0)) {
      return InvalidArgument("batch_indices shape " + ShapeToString(batch->shape()) + " does not match rois " +
                             ShapeToString(rois->shape()));
    }
    if (rois->dtype() != x->dtype()) return InvalidArgument("rois must have the type of X");
    std::vector<int64_t> batch_index(static_cast<size_t>(batch->size()));
    ONNXFLOW_RETURN_IF_ERROR(DispatchType<int64_t, int32_t>(batch->dtype(), [&](auto tag) {
      using I = decltype(tag);
      for (size_t i = 0; i < batch_index.size(); ++i) batch_index[i] = static_cast<int64_t>(batch->data<I>()[i]);
      return Status::Ok();
    }));
    for (size_t i = 0; i < batch_index.size(); ++i) {
      if (batch_index[i] < 0 || batch_index[i] >= x->dim(0)) {
        return OutOfRange("batch_indices[" + std::to_string(i) + "] = " + std::to_string(batch_index[i]) +
                          " is outside [0, " + std::to_string(x->dim(0)) + ")");
      }
    }
    const int64_t num_rois = rois->dim(0), channels = x->dim(1);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), {num_rois, channels, out_h_, out_w_}));
    if (y->size() == 0) return Status::Ok();
    if (x->dim(0) == 0 || x->dim(2) == 0 || x->dim(3) == 0) {
      return InvalidArgument("X has an empty axis: " + ShapeToString(x->shape()));
    }
    return DispatchType<float, double, Float16, BFloat16>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      Run<T>(ctx, *x, *rois, batch_index, y);
      return Status::Ok();
    });
  }

 private:
  // Where one roi sits on the feature map, and how densely its bins are sampled.
  struct RoiGeometry {
    double start_h, start_w, bin_h, bin_w;
    int64_t grid_h, grid_w;
  };

  RoiGeometry Geometry(const double* roi) const {
    const double offset = half_pixel_ ? 0.5 : 0.0;
    RoiGeometry g;
    g.start_w = roi[0] * spatial_scale_ - offset;
    g.start_h = roi[1] * spatial_scale_ - offset;
    double roi_w = roi[2] * spatial_scale_ - offset - g.start_w;
    double roi_h = roi[3] * spatial_scale_ - offset - g.start_h;
    if (!half_pixel_) {  // malformed rois become 1x1
      roi_w = std::max(roi_w, 1.0);
      roi_h = std::max(roi_h, 1.0);
    }
    g.bin_h = roi_h / static_cast<double>(out_h_);
    g.bin_w = roi_w / static_cast<double>(out_w_);
    // Adaptive grids are bounded so that a huge roi from the data cannot ask for billions of samples.
    auto grid = [&](double extent) {
      if (sampling_ratio_ > 0) return sampling_ratio_;
      const double n = std::ceil(extent);
      return n > 0 ? static_cast<int64_t>(std::min(n, static_cast<double>(kMaxGrid))) : int64_t{0};
    };
    g.grid_h = grid(g.bin_h);
    g.grid_w = grid(g.bin_w);
    return g;
  }

  // The bilinear samples of bin (ph, pw): corner offsets into one H x W plane and their weights.
  static void BinSamples(const RoiGeometry& g, int64_t ph, int64_t pw, int64_t height, int64_t width,
                         std::vector<Sample>* samples) {
    samples->clear();
    for (int64_t iy = 0; iy < g.grid_h; ++iy) {
      const double yy = g.start_h + static_cast<double>(ph) * g.bin_h +
                        (static_cast<double>(iy) + 0.5) * g.bin_h / static_cast<double>(g.grid_h);
      for (int64_t ix = 0; ix < g.grid_w; ++ix) {
        double x = g.start_w + static_cast<double>(pw) * g.bin_w +
                   (static_cast<double>(ix) + 0.5) * g.bin_w / static_cast<double>(g.grid_w);
        double y = yy;
        Sample s{{0, 0, 0, 0}, {0, 0, 0, 0}};
        if (!(y >= -1.0 && y <= static_cast<double>(height) && x >= -1.0 && x <= static_cast<double>(width))) {
          samples->push_back(s);  // more than a pixel outside: contributes 0
          continue;
        }
        y = std::max(y, 0.0);
        x = std::max(x, 0.0);
        int64_t y_low = static_cast<int64_t>(y), x_low = static_cast<int64_t>(x), y_high, x_high;
        if (y_low >= height - 1) {
          y_high = y_low = height - 1;
          y = static_cast<double>(y_low);
        } else {
          y_high = y_low + 1;
        }
        if (x_low >= width - 1) {
          x_high = x_low = width - 1;
          x = static_cast<double>(x_low);
        } else {
          x_high = x_low + 1;
        }
        const double ly = y - static_cast<double>(y_low), lx = x - static_cast<double>(x_low);
        const double hy = 1.0 - ly, hx = 1.0 - lx;
        s.pos[0] = y_low * width + x_low;
        s.pos[1] = y_low * width + x_high;
        s.pos[2] = y_high * width + x_low;
        s.pos[3] = y_high * width + x_high;
        s.w[0] = hy * hx;
        s.w[1] = hy * lx;
        s.w[2] = ly * hx;
        s.w[3] = ly * lx;
        samples->push_back(s);
      }
    }
  }

  template <typename T>
  void Run(const KernelContext& ctx, const Tensor& x, const Tensor& rois, const std::vector<int64_t>& batch_index,
           Tensor* y) const {
    const int64_t channels = x.dim(1), height = x.dim(2), width = x.dim(3);
    const int64_t num_rois = rois.dim(0);
    const T* src = x.data<T>();
    const T* roi_data = rois.data<T>();
    T* dst = y->mutable_data<T>();
    const int64_t bins = out_h_ * out_w_;
    ParallelFor(ctx, num_rois * bins, channels * 16, [&](int64_t begin, int64_t end) {
      std::vector<Sample> samples;
      for (int64_t item = begin; item < end; ++item) {
        const int64_t r = item / bins, b = item % bins;
        double roi[4];
        for (int k = 0; k < 4; ++k) roi[k] = static_cast<double>(ToCompute(roi_data[r * 4 + k]));
        const RoiGeometry g = Geometry(roi);
        BinSamples(g, b / out_w_, b % out_w_, height, width, &samples);
        const double count = static_cast<double>(std::max<size_t>(samples.size(), 1));
        for (int64_t c = 0; c < channels; ++c) {
          const T* plane = src + (batch_index[r] * channels + c) * height * width;
          double v = 0;
          for (size_t k = 0; k < samples.size(); ++k) {
            const Sample& s = samples[k];
            double t[4];
            for (int q = 0; q < 4; ++q) t[q] = s.w[q] * static_cast<double>(ToCompute(plane[s.pos[q]]));
            if (max_) {
              const double m = std::max(std::max(t[0], t[1]), std::max(t[2], t[3]));
              v = k == 0 ? m : std::max(v, m);
            } else {
              v += t[0] + t[1] + t[2] + t[3];
            }
          }
          if (!max_) v /= count;
          dst[(r * channels + c) * bins + b] = FromCompute<T>(static_cast<ComputeType<T>>(v));
        }
      }
    });
  }

  bool max_ = false;
  bool half_pixel_ = false;
  int64_t out_h_ = 1, out_w_ = 1;
  int64_t sampling_ratio_ = 0;
  double spatial_scale_ = 1.0;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterRoiAlign(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "RoiAlign", 10, kOpenEnded,
                           Make<RoiAlignKernel>());
}

}  // namespace image
}  // namespace onnxflow
