// DeformConv (19, 22), 2-D: each kernel tap samples X at its regular position plus a learned
// offset (bilinear interpolation, zero outside the image), optionally scaled by a mask. The
// sampled taps form a column matrix per image and group, multiplied by the weights on the GEMM.
#include <algorithm>
#include <cmath>
#include <type_traits>

#include "ops/framework/dispatch.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/float_view.h"
#include "ops/math/gemm.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

// Bilinear sample of one channel at (h, w); taps outside the image read 0.
template <typename T>
T Bilinear(const T* img, int64_t height, int64_t width, T h, T w) {
  const T hf = std::floor(h), wf = std::floor(w);
  const int64_t h0 = static_cast<int64_t>(hf), w0 = static_cast<int64_t>(wf);
  const T dh = h - hf, dw = w - wf;
  auto at = [&](int64_t y, int64_t x) -> T {
    return (y >= 0 && y < height && x >= 0 && x < width) ? img[y * width + x] : T(0);
  };
  return (T(1) - dh) * ((T(1) - dw) * at(h0, w0) + dw * at(h0, w0 + 1)) +
         dh * ((T(1) - dw) * at(h0 + 1, w0) + dw * at(h0 + 1, w0 + 1));
}

class DeformConvKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(ConvAttributes attrs, ParseConvAttributes(info));
    const int64_t offset_group = info.GetInt("offset_group", 1);
    if (offset_group < 1) return InvalidArgument("DeformConv: offset_group must be positive");
    return std::unique_ptr<OpKernel>(new DeformConvKernel(std::move(attrs), offset_group));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* offset, ctx.RequireTensor(2));
    const Tensor* bias = ctx.input_tensor(3);
    const Tensor* mask = ctx.input_tensor(4);
    for (const Tensor* t : {w, offset, bias, mask}) {
      if (t != nullptr && t->dtype() != x->dtype()) return InvalidArgument("DeformConv: inputs must share one type");
    }
    if (x->rank() != 4) return Unimplemented("DeformConv: only 2-D inputs [N, C, H, W] are supported");
    ONNXFLOW_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs_, x->shape(), w->shape()));
    // Before offset_group sizes the offsets: a hostile offset_group of 2^62 would wrap the product.
    if (g.in_channels % offset_group_ != 0 || offset_group_ > std::max<int64_t>(g.in_channels, 1)) {
      return InvalidArgument("DeformConv: channels not divisible by offset_group");
    }
    const int64_t kh = g.kernel[0], kw = g.kernel[1], ksize = kh * kw;
    const Shape expected_offset = {g.batch, offset_group_ * 2 * ksize, g.out_spatial[0], g.out_spatial[1]};
    if (offset->shape() != expected_offset) {
      return InvalidArgument("DeformConv: offset " + ShapeToString(offset->shape()) + " should be " +
                             ShapeToString(expected_offset));
    }
    if (mask != nullptr &&
        mask->shape() != Shape{g.batch, offset_group_ * ksize, g.out_spatial[0], g.out_spatial[1]}) {
      return InvalidArgument("DeformConv: mask " + ShapeToString(mask->shape()) + " does not match the offsets");
    }
    if (bias != nullptr && bias->size() != g.out_channels) return InvalidArgument("DeformConv: B must be [M]");
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), g.output_shape()));
    if (y->size() == 0) return Status::Ok();
    if (x->dtype() == DataType::kDouble) {
      Run<double>(g, x->data<double>(), w->data<double>(), offset->data<double>(),
                  bias ? bias->data<double>() : nullptr, mask ? mask->data<double>() : nullptr,
                  y->mutable_data<double>(), 1);
      return Status::Ok();
    }
    if (!IsFloatLike(x->dtype())) return Unimplemented("DeformConv: unsupported type");
    FloatScratch xs, ws, os, bs, ms, ys;
    float* yd = FloatOutput(y, ys);
    Run<float>(g, FloatData(*x, xs), FloatData(*w, ws), FloatData(*offset, os), bias ? FloatData(*bias, bs) : nullptr,
               mask ? FloatData(*mask, ms) : nullptr, yd, ctx.threads());
    StoreFloats(yd, y->size(), y);
    return Status::Ok();
  }

 private:
  DeformConvKernel(ConvAttributes attrs, int64_t offset_group) : attrs_(std::move(attrs)), offset_group_(offset_group) {}

  template <typename T>
  void Run(const ConvGeometry& g, const T* x, const T* w, const T* offset, const T* bias, const T* mask, T* y,
           int threads) const {
    const int64_t kh = g.kernel[0], kw = g.kernel[1], ksize = kh * kw;
    const int64_t height = g.in_spatial[0], width = g.in_spatial[1];
    const int64_t oh = g.out_spatial[0], ow = g.out_spatial[1], out = oh * ow;
    const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
    const int64_t c_per_offset = g.in_channels / offset_group_;
    std::vector<T> col(static_cast<size_t>(cg * ksize * out));
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t grp = 0; grp < g.group; ++grp) {
        for (int64_t c = 0; c < cg; ++c) {
          const int64_t channel = grp * cg + c;
          const int64_t og = channel / c_per_offset;
          const T* img = x + (n * g.in_channels + channel) * height * width;
          for (int64_t i = 0; i < kh; ++i) {
            for (int64_t j = 0; j < kw; ++j) {
              const int64_t tap = i * kw + j;
              const T* off_h = offset + ((n * offset_group_ + og) * ksize + tap) * 2 * out;
              const T* off_w = off_h + out;
              const T* m = mask != nullptr ? mask + ((n * offset_group_ + og) * ksize + tap) * out : nullptr;
              T* dst = col.data() + (c * ksize + tap) * out;
              for (int64_t p = 0; p < out; ++p) {
                const int64_t py = p / ow, px = p % ow;
                const T hh = static_cast<T>(py * g.strides[0] - g.pads_begin[0] + i * g.dilations[0]) + off_h[p];
                const T ww = static_cast<T>(px * g.strides[1] - g.pads_begin[1] + j * g.dilations[1]) + off_w[p];
                T v = Bilinear<T>(img, height, width, hh, ww);
                if (m != nullptr) v *= m[p];
                dst[p] = v;
              }
            }
          }
        }
        T* yg = y + (n * g.out_channels + grp * mg) * out;
        const T* wg = w + grp * mg * cg * ksize;
        if constexpr (std::is_same_v<T, float>) {
          GemmInputA ia{nullptr, wg, cg * ksize, false, 1.0f};
          GemmInputB ib{nullptr, col.data(), out, false};
          GemmEpilogue ep;
          ep.row_bias = bias != nullptr ? bias + grp * mg : nullptr;
          Sgemm(mg, out, cg * ksize, ia, ib, yg, out, ep, threads);
        } else {
          NaiveMatMul<T>(mg, out, cg * ksize, wg, cg * ksize, false, col.data(), out, false, yg, out);
          if (bias != nullptr) {
            for (int64_t m = 0; m < mg; ++m)
              for (int64_t p = 0; p < out; ++p) yg[m * out + p] += bias[grp * mg + m];
          }
        }
      }
    }
  }

  ConvAttributes attrs_;
  int64_t offset_group_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterDeformConvKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "DeformConv", 19, kOpenEnded, Make<DeformConvKernel>());
}

}  // namespace onnxflow
