// com.microsoft MaxpoolWithMask (version 1): a 1-, 2- or 3-D max pool of float X [N, C, D1..Dk]
// whose int32 mask M (X's rank, X's spatial dims) stops a window's scan where it is 0. Attributes
// kernel_shape, pads, strides, auto_pad; storage_order is accepted and, as in ONNX Runtime (there
// is no Indices output), means nothing. The op has no dilations or ceil_mode.
//
// ONNX Runtime 1.30's CPU kernel ("only works for TP3 L1", it says) is followed exactly, quirks
// included, since a model written for it expects them:
//  - a window scans its positions in row-major order and a 0 in the mask stops the innermost
//    loop: in 1-D the whole window, in 2-D the rest of that row (the next row still counts), in
//    3-D the rest of that depth run; in 2-D and 3-D position 0 of a plane is never masked;
//  - the mask plane a channel c reads starts at element (c * plane) % (mask N * mask C) of M, so a
//    mask of other N and C (even [1, 1, ...]) is accepted, and its planes are not matched to X's;
//  - an empty (or fully masked) window gives the lowest float, -3.4e38;
//  - the output size is ONNX Runtime's pooling formula in float: (in + pads - kernel) / stride + 1
//    truncated; pads must be smaller than the kernel.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "ops/framework/domains.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/ms_misc/register.h"

namespace onnxflow {
namespace {

enum class AutoPad { kNotSet, kValid, kSameUpper, kSameLower };

class MaxpoolWithMaskKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    if (info.input_count() != 2) {
      return InvalidArgument("MaxpoolWithMask: takes 2 inputs (X, M), got " + std::to_string(info.input_count()));
    }
    auto k = std::make_unique<MaxpoolWithMaskKernel>();
    const std::string pad = info.GetString("auto_pad", "NOTSET");
    if (pad == "NOTSET") {
      k->auto_pad_ = AutoPad::kNotSet;
    } else if (pad == "VALID") {
      k->auto_pad_ = AutoPad::kValid;
    } else if (pad == "SAME_UPPER") {
      k->auto_pad_ = AutoPad::kSameUpper;
    } else if (pad == "SAME_LOWER") {
      k->auto_pad_ = AutoPad::kSameLower;
    } else {
      return InvalidArgument("MaxpoolWithMask: attribute 'auto_pad' '" + pad +
                             "' is not NOTSET, VALID, SAME_UPPER or "
                             "SAME_LOWER");
    }
    for (const char* attr : {"dilations", "ceil_mode"}) {
      if (info.has_attribute(attr)) {
        return InvalidArgument(std::string("MaxpoolWithMask: attribute '") + attr +
                               "' is not part of the op (ONNX Runtime refuses it too)");
      }
    }
    k->kernel_ = info.GetInts("kernel_shape");
    const size_t nd = k->kernel_.size();
    if (nd < 1 || nd > 3) {
      return InvalidArgument("MaxpoolWithMask: attribute 'kernel_shape' must have 1 to 3 values, got " +
                             std::to_string(nd));
    }
    k->pads_ = info.GetInts("pads");
    if (k->pads_.empty()) k->pads_.assign(2 * nd, 0);
    k->strides_ = info.GetInts("strides");
    if (k->strides_.empty()) k->strides_.assign(nd, 1);
    if (k->pads_.size() != 2 * nd || k->strides_.size() != nd) {
      return InvalidArgument(
          "MaxpoolWithMask: attributes 'pads' and 'strides' need 2 and 1 values per axis of "
          "'kernel_shape'");
    }
    const int64_t storage_order = info.GetInt("storage_order", 0);
    if (storage_order != 0 && storage_order != 1) {
      return InvalidArgument("MaxpoolWithMask: attribute 'storage_order' must be 0 or 1");
    }
    for (size_t d = 0; d < nd; ++d) {
      const std::string axis = " on axis " + std::to_string(d);
      if (k->kernel_[d] < 1)
        return InvalidArgument("MaxpoolWithMask: attribute 'kernel_shape' must be positive" + axis);
      if (k->strides_[d] < 1) return InvalidArgument("MaxpoolWithMask: attribute 'strides' must be positive" + axis);
      if (k->pads_[d] < 0 || k->pads_[d + nd] < 0 || k->pads_[d] >= k->kernel_[d] ||
          k->pads_[d + nd] >= k->kernel_[d]) {
        return InvalidArgument("MaxpoolWithMask: attribute 'pads' must be non-negative and smaller than the kernel" +
                               axis);
      }
    }
    for (int i = 0; i < 2; ++i) {
      const DataType t = info.input_type(i), want = i == 0 ? DataType::kFloat : DataType::kInt32;
      if (t != DataType::kUndefined && t != want) {
        return InvalidArgument(std::string("MaxpoolWithMask: input '") + (i == 0 ? "X" : "M") + "' must be " +
                               DataTypeName(want) + ", got " + DataTypeName(t));
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* m, ctx.RequireTensor(1));
    if (x->dtype() != DataType::kFloat) {
      return InvalidArgument(std::string("MaxpoolWithMask: input 'X' must be float, got ") + DataTypeName(x->dtype()));
    }
    if (m->dtype() != DataType::kInt32) {
      return InvalidArgument(std::string("MaxpoolWithMask: input 'M' must be int32, got ") + DataTypeName(m->dtype()));
    }
    const size_t nd = kernel_.size();
    const Shape& xs = x->shape();
    const Shape& ms = m->shape();
    if (xs.size() != nd + 2) {
      return InvalidArgument("MaxpoolWithMask: input 'X' " + ShapeToString(xs) + " must have rank " +
                             std::to_string(nd + 2) + " for a kernel_shape of " + std::to_string(nd) + " values");
    }
    if (ms.size() != xs.size() || !std::equal(xs.begin() + 2, xs.end(), ms.begin() + 2)) {
      return InvalidArgument("MaxpoolWithMask: input 'M' " + ShapeToString(ms) +
                             " must have the rank and spatial "
                             "dims of input 'X' " +
                             ShapeToString(xs));
    }
    const int64_t planes = xs[0] * xs[1];
    if (planes > 0 && (ms[0] < 1 || ms[1] < 1)) {
      return InvalidArgument("MaxpoolWithMask: input 'M' " + ShapeToString(ms) + " has no N or C for input 'X' " +
                             ShapeToString(xs));
    }
    if (x->size() == 0 && xs[0] != 0) {
      return InvalidArgument("MaxpoolWithMask: input 'X' " + ShapeToString(xs) + " is empty (only N may be 0)");
    }
    std::vector<int64_t> out(nd), head(nd);
    for (size_t d = 0; d < nd; ++d) ONNXFLOW_RETURN_IF_ERROR(OutputSize(xs[d + 2], d, &out[d], &head[d]));
    Shape ys = {xs[0], xs[1]};
    ys.insert(ys.end(), out.begin(), out.end());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, ys));
    if (y->size() == 0) return Status::Ok();

    // Dims padded to 3: H, W, D (the kernel's axis order), 1 for the axes the op does not have.
    int64_t in3[3] = {1, 1, 1}, out3[3] = {1, 1, 1}, k3[3] = {1, 1, 1}, s3[3] = {1, 1, 1}, p3[3] = {0, 0, 0};
    for (size_t d = 0; d < nd; ++d) {
      in3[d] = xs[d + 2], out3[d] = out[d], k3[d] = kernel_[d], s3[d] = strides_[d], p3[d] = head[d];
    }
    const int64_t x_step = in3[0] * in3[1] * in3[2], y_step = out3[0] * out3[1] * out3[2];
    const int64_t mask_planes = ms[0] * ms[1];
    const float* xd = x->data<float>();
    const int32_t* md = m->data<int32_t>();
    float* yd = y->mutable_data<float>();
    ParallelFor(ctx, planes, y_step * k3[0] * k3[1] * k3[2], [&](int64_t c0, int64_t c1) {
      for (int64_t c = c0; c < c1; ++c) {
        const float* xp = xd + c * x_step;
        const int32_t* mp = md + (c * x_step) % mask_planes;
        float* yp = yd + c * y_step;
        for (int64_t oh = 0; oh < out3[0]; ++oh) {
          const int64_t h0 = std::max<int64_t>(oh * s3[0] - p3[0], 0);
          const int64_t h1 = std::min(oh * s3[0] - p3[0] + k3[0], in3[0]);
          for (int64_t ow = 0; ow < out3[1]; ++ow) {
            const int64_t w0 = std::max<int64_t>(ow * s3[1] - p3[1], 0);
            const int64_t w1 = std::min(ow * s3[1] - p3[1] + k3[1], in3[1]);
            for (int64_t od = 0; od < out3[2]; ++od) {
              const int64_t d0 = std::max<int64_t>(od * s3[2] - p3[2], 0);
              const int64_t d1 = std::min(od * s3[2] - p3[2] + k3[2], in3[2]);
              float best = std::numeric_limits<float>::lowest();
              // A masked position ends the loop over the op's last axis (for 1-D, the window),
              // never at position 0 in 2-D and 3-D (ONNX Runtime tests index > 0 there).
              bool stop_h = false;
              for (int64_t h = h0; h < h1 && !stop_h; ++h) {
                bool stop_w = false;
                for (int64_t w = w0; w < w1 && !stop_w; ++w) {
                  for (int64_t d = d0; d < d1; ++d) {
                    const int64_t at = (h * in3[1] + w) * in3[2] + d;
                    if ((nd == 1 || at > 0) && mp[at] == 0) {
                      stop_h = nd == 1;
                      stop_w = nd <= 2;
                      break;
                    }
                    if (xp[at] > best) best = xp[at];
                  }
                }
              }
              yp[(oh * out3[1] + ow) * out3[2] + od] = best;
            }
          }
        }
      }
    });
    return Status::Ok();
  }

 private:
  // ONNX Runtime's PoolAttributes output size (dilation 1, floor mode), its division in float, and
  // the head pad the window starts from; refused where ints would overflow or the size is negative.
  Status OutputSize(int64_t in, size_t d, int64_t* out, int64_t* head) const {
    const int64_t k = kernel_[d], s = strides_[d];
    const std::string axis = " on spatial axis " + std::to_string(d);
    int64_t total = 0, span = 0;
    if (auto_pad_ == AutoPad::kSameUpper || auto_pad_ == AutoPad::kSameLower) {
      int64_t target = 0, reach = 0;
      if (__builtin_add_overflow(in, s - 1, &target) || __builtin_mul_overflow(target / s - 1, s, &reach) ||
          __builtin_add_overflow(reach, k - in, &total)) {
        return InvalidArgument("MaxpoolWithMask: attributes 'strides' and 'kernel_shape' overflow the SAME padding" +
                               axis);
      }
      *head = auto_pad_ == AutoPad::kSameLower ? (total + 1) / 2 : total / 2;
    } else if (auto_pad_ == AutoPad::kValid) {
      *head = 0;
    } else {
      *head = pads_[d];
      if (__builtin_add_overflow(pads_[d], pads_[d + kernel_.size()], &total)) {
        return InvalidArgument("MaxpoolWithMask: attribute 'pads' overflows" + axis);
      }
    }
    if (__builtin_add_overflow(in, total, &span) || __builtin_sub_overflow(span, k, &span)) {
      return InvalidArgument("MaxpoolWithMask: attribute 'kernel_shape' or 'pads' overflows" + axis);
    }
    const float size = static_cast<float>(span) / static_cast<float>(s) + 1.0f;
    // Truncated toward zero as ONNX Runtime's cast does: (-1, 0) is an empty output, not negative.
    if (!(size > -1.0f)) {
      return InvalidArgument("MaxpoolWithMask: attribute 'kernel_shape' " + std::to_string(k) +
                             " is longer than input 'X' with its pads" + axis);
    }
    if (size >= 9.2e18f) return InvalidArgument("MaxpoolWithMask: the output is too long" + axis);
    *out = static_cast<int64_t>(size);
    return Status::Ok();
  }

  AutoPad auto_pad_ = AutoPad::kNotSet;
  std::vector<int64_t> kernel_, pads_, strides_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMaxpoolWithMask(KernelRegistry& registry) {
  return registry.Register(kMsDomain, "MaxpoolWithMask", 1, kOpenEnded, Make<MaxpoolWithMaskKernel>());
}

}  // namespace onnxflow
