// com.onnxflow ToBlocked and FromBlocked: float [N, C, H, W] <-> channel-blocked
// [N, ceil(C/16), H, W, 16] (blocked_layout.h). FromBlocked also takes float16 blocks (a float16
// model's activations) and widens them as it moves them; its Y is float, or with output_type
// FLOAT16 (10) float16 (a float16 model's plain values, graph/blocked_half.h), rounded once.
// ToBlocked zeroes the last block's pad lanes; FromBlocked's attribute `channels` says how many
// channels to keep (default: every lane); ToBlocked's, how many X must have (its reader's weights
// say; default: any). The graph pass puts them where a blocked region of the graph meets ops that
// read the plain layout.
//
// Each block of 16 channel planes is transposed 16 pixels at a time: a 16 x 16 tile (1 KB) read
// and written within L1, so both sides stream whole cache lines; on AVX-512 in registers
// (reorder-inl.h).
#include "ops/blocked/reorder.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/blocked/reorder.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/blocked/reorder-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <type_traits>
#include <vector>

#include "ops/blocked/blocked_layout.h"
#include "ops/cast/half_simd.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"

namespace onnxflow {

HWY_EXPORT(InterleaveChannelsImpl);
HWY_EXPORT(DeinterleaveImpl);
HWY_EXPORT(DeinterleaveHalfImpl);

void InterleaveChannels(const float* planes, int64_t plane_stride, int64_t channels, int64_t pixels, int64_t lanes,
                        float* interleaved) {
  HWY_DYNAMIC_DISPATCH(InterleaveChannelsImpl)(planes, plane_stride, channels, pixels, lanes, interleaved);
}

namespace {

void Deinterleave(const float* blocked, int64_t pixels, int64_t plane_stride, int64_t channels, float* planes) {
  HWY_DYNAMIC_DISPATCH(DeinterleaveImpl)(blocked, pixels, plane_stride, channels, planes);
}
void Deinterleave(const hwy::float16_t* blocked, int64_t pixels, int64_t plane_stride, int64_t channels,
                  float* planes) {
  HWY_DYNAMIC_DISPATCH(DeinterleaveHalfImpl)(blocked, pixels, plane_stride, channels, planes);
}

// Pixels per work item of a reorder: a multiple of the 16-pixel tile, 64 KB of a block read.
constexpr int64_t kRunPixels = 1024;

// ToBlocked (plain -> blocked) or FromBlocked: a run of pixels of one block of 16 channel planes
// per work item.
class ReorderKernel : public OpKernel {
 public:
  ReorderKernel(bool to_blocked, int64_t channels, DataType y_type)
      : to_blocked_(to_blocked), channels_(channels), y_type_(y_type) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (to_blocked_ && x->dtype() != DataType::kFloat) return InvalidArgument("ToBlocked: input 'X' must be float");
    if (!to_blocked_) ONNXFLOW_RETURN_IF_ERROR(RequireFloatOrHalf(*x, "FromBlocked", "X"));
    Shape nchw = x->shape();
    if (to_blocked_ && x->rank() != 4) {
      return InvalidArgument("ToBlocked: input 'X' must be [N, C, H, W], got " + ShapeToString(x->shape()));
    }
    if (to_blocked_ && channels_ > 0 && x->dim(1) != channels_) {
      return InvalidArgument("ToBlocked: input 'X' " + ShapeToString(x->shape()) + " must have the " +
                             std::to_string(channels_) + " channels its blocked reader's weights expect");
    }
    if (!to_blocked_) {
      ONNXFLOW_ASSIGN_OR_RETURN(nchw, UnblockedShape(x->shape(), "X"));
      if (channels_ > 0) {
        if (channels_ > nchw[1] || channels_ <= nchw[1] - kChannelBlock) {
          return InvalidArgument("FromBlocked: " + std::to_string(channels_) + " channels do not fill the last of " +
                                 std::to_string(x->dim(1)) + " blocks");
        }
        nchw[1] = channels_;
      }
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, y_type_,
                                                                    to_blocked_ ? BlockedShape(nchw) : nchw));
    const int64_t channels = nchw[1], pixels = nchw[2] * nchw[3];
    const int64_t blocks = (channels + kChannelBlock - 1) / kChannelBlock;
    const bool half_y = y_type_ == DataType::kFloat16;
    float* yd = half_y ? nullptr : y->mutable_data<float>();
    // Work items of a block's run of kRunPixels pixels: a segmentation head's [1, 21, 224, 224]
    // is two blocks, too few to split over the cores whole. `xd`: X's data, float or
    // hwy::float16_t (FromBlocked only).
    const int64_t runs = (pixels + kRunPixels - 1) / kRunPixels;
    const auto reorder = [&](const auto* xd) {
      ParallelFor(ctx, nchw[0] * blocks * runs, kRunPixels * kChannelBlock, [&](int64_t i0, int64_t i1) {
        // A float16 Y: each run's planes in float here first, then narrowed.
        std::vector<float> run_planes(half_y ? static_cast<size_t>(kChannelBlock * kRunPixels) : 0);
        for (int64_t i = i0; i < i1; ++i) {
          const int64_t block = i / runs, n = block / blocks, b = block % blocks;
          const int64_t p0 = i % runs * kRunPixels, count = std::min(kRunPixels, pixels - p0);
          const int64_t in_block = std::min(kChannelBlock, channels - b * kChannelBlock);
          const int64_t plain_at = (n * channels + b * kChannelBlock) * pixels + p0;
          const int64_t blocked_at = (block * pixels + p0) * kChannelBlock;
          if constexpr (std::is_same_v<decltype(xd), const float*>) {  // ToBlocked takes float only
            if (to_blocked_) {
              InterleaveChannels(xd + plain_at, pixels, in_block, count, kChannelBlock, yd + blocked_at);
              continue;
            }
          }
          if (!half_y) {
            Deinterleave(xd + blocked_at, count, pixels, in_block, yd + plain_at);
            continue;
          }
          Deinterleave(xd + blocked_at, count, kRunPixels, in_block, run_planes.data());
          for (int64_t c = 0; c < in_block; ++c) {
            FloatToHalfArray(run_planes.data() + c * kRunPixels, y->mutable_data<uint16_t>() + plain_at + c * pixels,
                             count);
          }
        }
      });
    };
    if (x->dtype() == DataType::kFloat16) {
      reorder(x->data<hwy::float16_t>());
    } else {
      reorder(x->data<float>());
    }
    return Status::Ok();
  }

 private:
  bool to_blocked_;
  // FromBlocked: the channels to keep (the last block's pad lanes dropped); ToBlocked: the channels X
  // must have. 0: all, any.
  int64_t channels_;
  DataType y_type_;  // FromBlocked: float, or float16 (output_type: a float16 model's plain values)
};

}  // namespace

void FromBlockedSpec::WriteTo(onnx::NodeProto& node) const {
  if (channels > 0) {
    SetAttribute(node, "channels", channels);
  } else {
    RemoveAttribute(node, "channels");
  }
}

FromBlockedSpec FromBlockedSpec::Parse(const KernelInfo& info) { return FromBlockedSpec{info.GetInt("channels", 0)}; }

ONNXFLOW_REGISTRAR Status RegisterBlockedReorders(KernelRegistry& registry) {
  for (bool to_blocked : {true, false}) {
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxflowDomain,
                                               to_blocked ? internal_ops::kToBlocked : internal_ops::kFromBlocked,
                                               internal_ops::kVersion,
                                               kOpenEnded,
                                               [to_blocked](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
                                                 const int64_t y_type = info.GetInt("output_type", 1);
                                                 if (y_type != 1 && (to_blocked || y_type != 10)) {
                                                   return InvalidArgument(
                                                       std::string(to_blocked ? "ToBlocked" : "FromBlocked") +
                                                       ": output_type must be " +
                                                       (to_blocked ? "FLOAT (1)" : "FLOAT (1) or FLOAT16 (10)") +
                                                       ", got " + std::to_string(y_type));
                                                 }
                                                 return std::unique_ptr<OpKernel>(
                                                     new ReorderKernel(to_blocked, FromBlockedSpec::Parse(info).channels,
                                                                       static_cast<DataType>(y_type)));
                                               }));
  }
  return Status::Ok();
}

}  // namespace onnxflow

#endif  // HWY_ONCE
