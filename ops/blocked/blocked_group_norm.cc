// com.onnxflow BlockedGroupNormalization: GroupNormalization on a channel-blocked tensor
// (blocked_layout.h). Stable Diffusion's U-Net and VAE put a GroupNorm -> SiLU before nearly every
// convolution; plain, each one cost a reorder out of the blocked layout, the normalization, an
// elementwise pass and a reorder back. InstanceNormalization is the case of one channel a group.
//
//   inputs: X [N, ceil(C/16), H, W, 16] blocked; scale, B [C] constants (one per channel, as in
//           GroupNormalization-21; the pass widens version 18's per-group ones)
//   output: Y of X's shape; per image and group of C / num_groups neighbouring channels,
//           y = (x - mean) / sqrt(var + epsilon) * scale[c] + B[c], the population variance
//   attributes: num_groups, epsilon, and FusedConv's activation / activation_alpha /
//               activation_beta (the SiLU after it, taken by graph/blocked_layout.cc)
// Statistics in two passes as the plain kernel (ops/nn/instance_group_norm.cc) takes them, the
// mean then the squared deviations from it, runs of pixels summed per lane in float and their
// totals in double (blocked_group_norm-inl.h). Pad lanes get scale and shift 0 and so hold 0,
// finite as blocked pad lanes must be.
#include "ops/blocked/blocked_group_norm.h"
#include "ops/framework/internal_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/blocked/blocked_group_norm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/blocked/blocked_group_norm-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ops/blocked/blocked_batch_norm.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/framework/parallel.h"
#include "ops/math/fused_activation.h"

namespace onnxflow {

HWY_EXPORT(LaneSumsImpl);

namespace {

class BlockedGroupNormKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    static const char* kNames[] = {"X", "scale", "B"};
    const Tensor* params[3] = {};
    for (int i = 1; i < 3; ++i) {
      params[i] = info.constant_input(i);
      if (params[i] == nullptr || params[i]->dtype() != DataType::kFloat || params[i]->rank() != 1 ||
          params[i]->size() != params[1]->size()) {
        return InvalidArgument(std::string("BlockedGroupNormalization: ") + kNames[i] +
                               " must be a constant float vector of the channels' length");
      }
    }
    auto kernel = std::unique_ptr<BlockedGroupNormKernel>(new BlockedGroupNormKernel());
    kernel->channels_ = params[1]->size();
    kernel->groups_ = info.GetInt("num_groups", 0);
    if (kernel->groups_ <= 0 || kernel->channels_ % kernel->groups_ != 0) {
      return InvalidArgument("BlockedGroupNormalization: num_groups = " + std::to_string(kernel->groups_) +
                             " must be positive and divide the " + std::to_string(kernel->channels_) + " channels");
    }
    kernel->epsilon_ = info.GetFloat("epsilon", 1e-5f);
    ONNXFLOW_ASSIGN_OR_RETURN(kernel->activation_, ParseFusedActivation(info));
    kernel->blocks_ = (kernel->channels_ + kChannelBlock - 1) / kChannelBlock;
    kernel->scale_.assign(params[1]->data<float>(), params[1]->data<float>() + kernel->channels_);
    kernel->bias_.assign(params[2]->data<float>(), params[2]->data<float>() + kernel->channels_);
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  // The parameters live in the kernel.
  bool ReadsAtRun(int input) const override { return input == 0; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat) return InvalidArgument("BlockedGroupNormalization: input 'X' must be float");
    ONNXFLOW_RETURN_IF_ERROR(
        UnblockedShapeOfBlocks(x->shape(), "X", blocks_, "BlockedGroupNormalization", "its scale").status());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, x->shape()));
    const int64_t images = x->dim(0), planes = images * blocks_, rows = x->dim(2), row_pixels = x->dim(3);
    const int64_t pixels = rows * row_pixels;
    if (planes == 0 || pixels == 0) return Status::Ok();
    const float* xd = x->data<float>();
    float* yd = y->mutable_data<float>();
    const size_t lanes = static_cast<size_t>(planes * kChannelBlock);

    // Per (image, block, lane): the sum of deviations from the plane's first pixel, then the mean
    // of the lane's group in every lane of it.
    std::vector<double> sums(lanes, 0.0);
    std::vector<float> center(lanes);
    for (int64_t p = 0; p < planes; ++p) {
      std::copy(xd + p * pixels * kChannelBlock, xd + (p * pixels + 1) * kChannelBlock, center.begin() + p * kChannelBlock);
    }
    LaneTotals(ctx, xd, planes, pixels, center.data(), false, sums.data());
    const int64_t per_group = channels_ / groups_;
    const double count = static_cast<double>(per_group * pixels);
    std::vector<double> means(static_cast<size_t>(images * groups_));
    for (int64_t i = 0; i < images; ++i) {
      for (int64_t g = 0; g < groups_; ++g) {
        double sum = 0;
        for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
          sum += sums[Lane(i, c)] + static_cast<double>(center[Lane(i, c)]) * static_cast<double>(pixels);
        }
        means[i * groups_ + g] = sum / count;
      }
    }
    for (int64_t i = 0; i < images; ++i) {
      for (int64_t c = 0; c < channels_; ++c) center[Lane(i, c)] = static_cast<float>(means[i * groups_ + c / per_group]);
    }
    // The squared deviations from that mean, then each channel's scale and shift.
    std::fill(sums.begin(), sums.end(), 0.0);
    LaneTotals(ctx, xd, planes, pixels, center.data(), true, sums.data());
    std::vector<float> scale(lanes, 0.0f), shift(lanes, 0.0f);  // pad lanes 0
    for (int64_t i = 0; i < images; ++i) {
      for (int64_t g = 0; g < groups_; ++g) {
        double squares = 0;
        for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) squares += sums[Lane(i, c)];
        const double inv = 1.0 / std::sqrt(squares / count + epsilon_);
        for (int64_t c = g * per_group; c < (g + 1) * per_group; ++c) {
          const double a = inv * scale_[static_cast<size_t>(c)];
          scale[Lane(i, c)] = static_cast<float>(a);
          shift[Lane(i, c)] = static_cast<float>(bias_[static_cast<size_t>(c)] - means[i * groups_ + g] * a);
        }
      }
    }
    // Items are rows of a plane, so that a few large planes still split over the cores.
    ParallelFor(ctx, planes * rows, row_pixels * kChannelBlock * kCopyCostPerElement, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t plane = r / rows, at = r * row_pixels * kChannelBlock;
        ScaleShiftBlockPixels(xd + at, row_pixels, scale.data() + plane * kChannelBlock,
                              shift.data() + plane * kChannelBlock, activation_, yd + at);
      }
    });
    return Status::Ok();
  }

 private:
  BlockedGroupNormKernel() = default;

  // The index of channel c of image i among the per-lane values of [images, blocks, 16].
  size_t Lane(int64_t i, int64_t c) const {
    return static_cast<size_t>((i * blocks_ + c / kChannelBlock) * kChannelBlock + c % kChannelBlock);
  }

  // LaneSumsImpl over the `planes` planes of x, a plane per task (a plane's lanes are its own).
  static void LaneTotals(const KernelContext& ctx, const float* x, int64_t planes, int64_t pixels, const float* center,
                         bool squares, double* sums) {
    const auto lane_sums = HWY_DYNAMIC_DISPATCH(LaneSumsImpl);
    ParallelFor(ctx, planes, pixels * kChannelBlock * kCopyCostPerElement, [&](int64_t p0, int64_t p1) {
      for (int64_t p = p0; p < p1; ++p) {
        lane_sums(x + p * pixels * kChannelBlock, pixels, center + p * kChannelBlock, squares, sums + p * kChannelBlock);
      }
    });
  }

  int64_t channels_ = 0, groups_ = 0, blocks_ = 0;
  float epsilon_ = 1e-5f;
  ActivationSpec activation_;
  std::vector<float> scale_, bias_;  // per channel
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBlockedGroupNorm(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kBlockedGroupNormalization, internal_ops::kVersion,
                           kOpenEnded, BlockedGroupNormKernel::Create);
}

}  // namespace onnxflow

#endif  // HWY_ONCE
