// com.onnxflow BlockedDepthwiseConv: a 2-D float depthwise Conv (group = C input channels = M
// output channels, with FusedConv's activation) on a channel-blocked tensor (blocked_layout.h), so
// that MobileNet-like networks stay blocked from one pointwise convolution to the next instead of
// reordering to [N, C, H, W] and back around every depthwise layer.
//
//   inputs: X [N, ceil(C/16), H, W, 16] blocked; W [C, 1, kh, kw] constant; B [C] constant (optional)
//   output: Y [N, ceil(C/16), OH, OW, 16] = act(depthwise_conv(X, W) + B)
//   attributes: Conv's (group = C), activation / activation_alpha / activation_beta, and
//               output_type: FLOAT (1, the default) or FLOAT16 (10), Y's type
// Pad lanes have zero weights and bias, so they hold act(0), finite like every blocked pad lane.
// X (float or float16) and Y may be a float16 model's activations, stored in its own 16 bits
// (graph/blocked_half.cc): the rows widen X in registers and sum in float as for float, and a
// float16 Y is rounded once, to nearest even, as it is stored.
//
// The weights are packed at load as [block][tap][16]. Work is split over (image, block, output
// row); each row runs in blocked_depthwise-inl.h.
#include "ops/framework/internal_ops.h"
#include "ops/blocked/blocked_depthwise.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/blocked/blocked_depthwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/blocked/blocked_depthwise-inl.h"

#if HWY_ONCE

#include <memory>
#include <vector>

#include "ops/blocked/blocked_depthwise_row.h"
#include "ops/blocked/constant_bias.h"
#include "ops/framework/parallel.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/fused_activation.h"
#include "ops/math/float_view.h"

namespace onnxflow {

HWY_EXPORT(DepthwiseRowImpl);
HWY_EXPORT(DepthwiseRowHalfXImpl);
HWY_EXPORT(DepthwiseRowHalfYImpl);
HWY_EXPORT(DepthwiseRowHalfImpl);

void RunBlockedDepthwiseRow(const BlockedDepthwiseRow<float, float>& row) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowImpl)(row);
}
void RunBlockedDepthwiseRow(const BlockedDepthwiseRow<hwy::float16_t, float>& row) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowHalfXImpl)(row);
}
void RunBlockedDepthwiseRow(const BlockedDepthwiseRow<float, hwy::float16_t>& row) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowHalfYImpl)(row);
}
void RunBlockedDepthwiseRow(const BlockedDepthwiseRow<hwy::float16_t, hwy::float16_t>& row) {
  HWY_DYNAMIC_DISPATCH(DepthwiseRowHalfImpl)(row);
}

namespace {

class BlockedDepthwiseKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(ConvAttributes attrs, ParseConvAttributes(info));
    ONNXFLOW_ASSIGN_OR_RETURN(ActivationSpec activation, ParseFusedActivation(info));
    const Tensor* w = info.constant_input(1);
    if (w == nullptr || !IsFloatLike(w->dtype()) || w->rank() != 4 || w->dim(1) != 1 || w->dim(0) == 0 || w->dim(2) == 0 ||
        w->dim(3) == 0) {
      return InvalidArgument("BlockedDepthwiseConv: W must be a constant float, float16 or bfloat16 [C, 1, kh, kw]");
    }
    const int64_t channels = w->dim(0);
    if (attrs.group != channels) {
      return InvalidArgument("BlockedDepthwiseConv: group " + std::to_string(attrs.group) + " must equal W's " +
                             std::to_string(channels) + " channels");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* b, ConstantBias(info, "BlockedDepthwiseConv", channels));
    const int64_t y_type = info.GetInt("output_type", static_cast<int64_t>(DataType::kFloat));
    if (y_type != static_cast<int64_t>(DataType::kFloat) && y_type != static_cast<int64_t>(DataType::kFloat16)) {
      return InvalidArgument("BlockedDepthwiseConv: output_type must be FLOAT (1) or FLOAT16 (10), got " +
                             std::to_string(y_type));
    }
    auto kernel =
        std::unique_ptr<BlockedDepthwiseKernel>(new BlockedDepthwiseKernel(std::move(attrs), activation, *w, b));
    kernel->y_type_ = static_cast<DataType>(y_type);
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  // W and B live packed in the kernel.
  bool ReadsAtRun(int input) const override { return input != 1 && input != 2; }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_RETURN_IF_ERROR(RequireFloatOrHalf(*x, "BlockedDepthwiseConv", "X"));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape x_nchw, UnblockedShapeOfBlocks(x->shape(), "X", blocks_, "BlockedDepthwiseConv",
                                                                   "W " + ShapeToString(w_shape_)));
    x_nchw[1] = w_shape_[0];
    ONNXFLOW_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs_, x_nchw, w_shape_));
    if (g.kernel.size() != 2) return InvalidArgument("BlockedDepthwiseConv: 2-D only");
    const Shape y_shape = {g.batch, blocks_, g.out_spatial[0], g.out_spatial[1], kChannelBlock};
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, y_type_, y_shape));
    if (y->size() == 0) return Status::Ok();
    // Each pair of types runs its own instance of the rows (blocked_depthwise_row.h).
    const bool half_x = x->dtype() == DataType::kFloat16, half_y = y_type_ == DataType::kFloat16;
    if (half_x && half_y) {
      Convolve(ctx, g, x->data<hwy::float16_t>(), y->mutable_data<hwy::float16_t>());
    } else if (half_x) {
      Convolve(ctx, g, x->data<hwy::float16_t>(), y->mutable_data<float>());
    } else if (half_y) {
      Convolve(ctx, g, x->data<float>(), y->mutable_data<hwy::float16_t>());
    } else {
      Convolve(ctx, g, x->data<float>(), y->mutable_data<float>());
    }
    return Status::Ok();
  }

 private:
  // The convolution of geometry `g` from X to Y, elements of types TX and TY, split over (image,
  // block, output row).
  template <typename TX, typename TY>
  void Convolve(KernelContext& ctx, const ConvGeometry& g, const TX* xd, TY* yd) const {
    const int64_t out_h = g.out_spatial[0], out_w = g.out_spatial[1];
    const int64_t taps = g.kernel[0] * g.kernel[1];
    const int64_t in_plane = g.in_size() * kChannelBlock, out_plane = out_h * out_w * kChannelBlock;
    constexpr int64_t kOpsPerTap = 2;  // a load and a multiply-add, per vector of 16 channels
    ParallelFor(ctx, g.batch * blocks_ * out_h, out_w * taps * kChannelBlock * kOpsPerTap,
                [&](int64_t r0, int64_t r1) {
                  for (int64_t r = r0; r < r1; ++r) {
                    const int64_t plane = r / out_h, oh = r % out_h, block = plane % blocks_;
                    BlockedDepthwiseRow<TX, TY> row;
                    row.plane = xd + plane * in_plane;
                    row.in_h = g.in_spatial[0];
                    row.in_w = g.in_spatial[1];
                    row.row0 = oh * g.strides[0] - g.pads_begin[0];
                    row.left = g.pads_begin[1];
                    row.kh = g.kernel[0];
                    row.kw = g.kernel[1];
                    row.stride_w = g.strides[1];
                    row.dilation_h = g.dilations[0];
                    row.dilation_w = g.dilations[1];
                    row.weights = weights_.data() + block * taps * kChannelBlock;
                    row.bias = bias_.data() + block * kChannelBlock;
                    row.out_w = out_w;
                    row.out = yd + plane * out_plane + oh * out_w * kChannelBlock;
                    row.activation = activation_;
                    RunBlockedDepthwiseRow(row);
                  }
                });
  }

  BlockedDepthwiseKernel(ConvAttributes attrs, ActivationSpec activation, const Tensor& w, const Tensor* b)
      : attrs_(std::move(attrs)), activation_(activation), w_shape_(w.shape()) {
    const int64_t channels = w.dim(0), taps = w.dim(2) * w.dim(3);
    blocks_ = (channels + kChannelBlock - 1) / kChannelBlock;
    weights_.assign(static_cast<size_t>(blocks_ * taps * kChannelBlock), 0.0f);
    bias_.assign(static_cast<size_t>(blocks_ * kChannelBlock), 0.0f);
    // A half model's weights are widened here: a depthwise layer's are 1/C of a full
    // convolution's, too few to keep in 16 bits.
    FloatScratch widened;
    const float* wd = FloatData(w, widened);
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t block = c / kChannelBlock, lane = c % kChannelBlock;
      for (int64_t t = 0; t < taps; ++t) {
        weights_[static_cast<size_t>((block * taps + t) * kChannelBlock + lane)] = wd[c * taps + t];
      }
      if (b != nullptr) bias_[static_cast<size_t>(c)] = b->data<float>()[c];
    }
  }

  ConvAttributes attrs_;
  ActivationSpec activation_;
  Shape w_shape_;
  int64_t blocks_ = 0;
  std::vector<float> weights_;  // [block][tap][16], zeros in pad lanes
  std::vector<float> bias_;     // [block * 16]
  DataType y_type_ = DataType::kFloat;  // output_type
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterBlockedDepthwiseConv(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kBlockedDepthwiseConv, internal_ops::kVersion, kOpenEnded, BlockedDepthwiseKernel::Create);
}

}  // namespace onnxflow

#endif  // HWY_ONCE
