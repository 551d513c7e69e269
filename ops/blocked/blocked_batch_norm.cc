// com.onnxflow BlockedBatchNormalization: inference BatchNormalization on a channel-blocked tensor
// (blocked_layout.h). Pre-activation networks (ResNet v2, DenseNet) normalize a convolution's
// input rather than its output, so the normalization cannot fold into the weights; blocked, it
// costs one pass instead of a reorder out of the blocked layout, a plain pass, and a reorder back.
//
//   inputs: X [N, ceil(C/16), H, W, 16] blocked; scale, B, input_mean, input_var [C] constants;
//           optional slope [C] constant: a PRelu of per-channel slopes after the normalization
//   output: Y of X's shape and type, y = (x - mean) / sqrt(var + epsilon) * scale + B per channel,
//           then y < 0 ? y * slope : y with a slope
//   attributes: epsilon, and FusedConv's activation / activation_alpha / activation_beta (the Relu
//               after a pre-activation normalization, taken by graph/blocked_layout.cc)
// The parameters become one scale and one shift per channel at load, zero in the pad lanes (which
// then hold 0, finite as blocked pad lanes must be). X may be float16, a float16 model's
// activations stored in its own 16 bits (graph/blocked_half.cc), and Y then is too: each pixel is
// widened in registers, computed in float as for float, and rounded once on store.
#include "ops/framework/internal_ops.h"
#include "ops/blocked/blocked_batch_norm.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/blocked/blocked_batch_norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/blocked/blocked_batch_norm-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ops/blocked/blocked_layout.h"
#include "ops/framework/parallel.h"
#include "ops/math/fused_activation.h"

namespace onnxflow {

HWY_EXPORT(ScaleShiftPixelsImpl);
HWY_EXPORT(ScaleShiftPixelsHalfImpl);
HWY_EXPORT(ScaleShiftPReluPixelsImpl);
HWY_EXPORT(ScaleShiftPReluPixelsHalfImpl);

void ScaleShiftBlockPixels(const float* x, int64_t pixels, const float* scale, const float* shift,
                           const ActivationSpec& activation, float* y) {
  HWY_DYNAMIC_DISPATCH(ScaleShiftPixelsImpl)(x, pixels, scale, shift, activation, y);
}

namespace {

class BlockedBatchNormKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    static const char* kNames[] = {"X", "scale", "B", "input_mean", "input_var"};
    const Tensor* params[5] = {};
    for (int i = 1; i < 5; ++i) {
      params[i] = info.constant_input(i);
      if (params[i] == nullptr || params[i]->dtype() != DataType::kFloat || params[i]->rank() != 1 ||
          params[i]->size() != params[1]->size()) {
        return InvalidArgument(std::string("BlockedBatchNormalization: ") + kNames[i] +
                               " must be a constant float vector of the channels' length");
      }
    }
    const int64_t channels = params[1]->size();
    // Input 5 given and not empty, as graph/blocked_layout.cc's HasSlope reads it.
    const bool has_slope = info.input_count() > 5 && !info.node().input(5).empty();
    const Tensor* slope = has_slope ? info.constant_input(5) : nullptr;
    if (has_slope && (slope == nullptr || slope->dtype() != DataType::kFloat || slope->rank() != 1 ||
                      slope->size() != channels)) {
      return InvalidArgument("BlockedBatchNormalization: slope must be a constant float vector of the channels' length");
    }
    const double epsilon = info.GetFloat("epsilon", 1e-5f);
    auto kernel = std::unique_ptr<BlockedBatchNormKernel>(new BlockedBatchNormKernel());
    ONNXFLOW_ASSIGN_OR_RETURN(kernel->activation_, ParseFusedActivation(info));
    kernel->blocks_ = (channels + kChannelBlock - 1) / kChannelBlock;
    kernel->scale_.assign(static_cast<size_t>(kernel->blocks_ * kChannelBlock), 0.0f);
    kernel->shift_.assign(kernel->scale_.size(), 0.0f);
    for (int64_t c = 0; c < channels; ++c) {
      const double s = params[1]->data<float>()[c] / std::sqrt(static_cast<double>(params[4]->data<float>()[c]) + epsilon);
      kernel->scale_[static_cast<size_t>(c)] = static_cast<float>(s);
      kernel->shift_[static_cast<size_t>(c)] =
          static_cast<float>(params[2]->data<float>()[c] - params[3]->data<float>()[c] * s);
    }
    if (slope != nullptr) {
      kernel->slope_.assign(kernel->scale_.size(), 0.0f);
      std::copy_n(slope->data<float>(), channels, kernel->slope_.begin());
    }
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  // The parameters (and the slope) live folded in the kernel.
  bool ReadsAtRun(int input) const override { return input == 0; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatOrHalf(*x, "BlockedBatchNormalization", "X"));
    ONNXFLOW_RETURN_IF_ERROR(
        UnblockedShapeOfBlocks(x->shape(), "X", blocks_, "BlockedBatchNormalization", "its scale")
            .status());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), x->shape()));
    if (x->dtype() == DataType::kFloat16) {
      Normalize(ctx, *x, x->data<hwy::float16_t>(), y->mutable_data<hwy::float16_t>(),
                HWY_DYNAMIC_DISPATCH(ScaleShiftPixelsHalfImpl), HWY_DYNAMIC_DISPATCH(ScaleShiftPReluPixelsHalfImpl));
    } else {
      Normalize(ctx, *x, x->data<float>(), y->mutable_data<float>(), HWY_DYNAMIC_DISPATCH(ScaleShiftPixelsImpl),
                HWY_DYNAMIC_DISPATCH(ScaleShiftPReluPixelsImpl));
    }
    return Status::Ok();
  }

 private:
  BlockedBatchNormKernel() = default;

  // Y = the normalization of X, both of element type T, with the row functions for T.
  template <typename T, typename ScaleShift, typename ScaleShiftPRelu>
  void Normalize(KernelContext& ctx, const Tensor& x, const T* xd, T* yd, ScaleShift scale_shift,
                 ScaleShiftPRelu scale_shift_prelu) const {
    const int64_t planes = x.dim(0) * blocks_;
    // Items are rows of a plane, so that a few large planes still split over the cores.
    const int64_t rows = x.dim(2), row_pixels = x.dim(3);
    ParallelFor(ctx, planes * rows, row_pixels * kChannelBlock * kCopyCostPerElement, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t block = (r / rows) % blocks_;
        const int64_t at = r * row_pixels * kChannelBlock;
        const int64_t lane0 = block * kChannelBlock;
        if (slope_.empty()) {
          scale_shift(xd + at, row_pixels, scale_.data() + lane0, shift_.data() + lane0, activation_, yd + at);
        } else {
          scale_shift_prelu(xd + at, row_pixels, scale_.data() + lane0, shift_.data() + lane0, slope_.data() + lane0,
                            activation_, yd + at);
        }
      }
    });
  }

  int64_t blocks_ = 0;
  ActivationSpec activation_;
  std::vector<float> scale_, shift_;  // per channel, [blocks * 16]
  std::vector<float> slope_;          // the same, when a PRelu follows; empty otherwise
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBlockedBatchNorm(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kBlockedBatchNormalization, internal_ops::kVersion, kOpenEnded, BlockedBatchNormKernel::Create);
}

}  // namespace onnxflow

#endif  // HWY_ONCE
