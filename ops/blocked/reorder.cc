// com.onnxflow ToBlocked and FromBlocked: float [N, C, H, W] <-> channel-blocked
// [N, C/16, H, W, 16] (blocked_layout.h), C a multiple of 16. The graph pass puts them where a
// blocked region of the graph meets ops that read the plain layout.
//
// Each block of 16 channel planes is transposed 16 pixels at a time: a 16 x 16 tile (1 KB) read
// and written within L1, so both sides stream whole cache lines.
#include "ops/blocked/reorder.h"

#include <algorithm>

#include "ops/blocked/blocked_layout.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"

namespace onnxflow {
namespace {

// planes: 16 planes of `pixels` floats, `plane_stride` apart; blocked: [pixels][16].
void Interleave(const float* planes, int64_t plane_stride, int64_t pixels, float* blocked) {
  for (int64_t p0 = 0; p0 < pixels; p0 += kChannelBlock) {
    const int64_t count = std::min(kChannelBlock, pixels - p0);
    for (int64_t c = 0; c < kChannelBlock; ++c) {
      const float* src = planes + c * plane_stride + p0;
      float* dst = blocked + p0 * kChannelBlock + c;
      for (int64_t i = 0; i < count; ++i) dst[i * kChannelBlock] = src[i];
    }
  }
}

void Deinterleave(const float* blocked, int64_t pixels, int64_t plane_stride, float* planes) {
  for (int64_t p0 = 0; p0 < pixels; p0 += kChannelBlock) {
    const int64_t count = std::min(kChannelBlock, pixels - p0);
    for (int64_t c = 0; c < kChannelBlock; ++c) {
      const float* src = blocked + p0 * kChannelBlock + c;
      float* dst = planes + c * plane_stride + p0;
      for (int64_t i = 0; i < count; ++i) dst[i] = src[i * kChannelBlock];
    }
  }
}

// ToBlocked (plain -> blocked) or FromBlocked: one block of 16 channel planes per work item.
class ReorderKernel : public OpKernel {
 public:
  explicit ReorderKernel(bool to_blocked) : to_blocked_(to_blocked) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    Shape nchw = x->shape();
    if (to_blocked_ && (x->dtype() != DataType::kFloat || x->rank() != 4 || x->dim(1) % kChannelBlock != 0)) {
      return InvalidArgument("ToBlocked: input 'X' must be float [N, C, H, W] with C a multiple of 16, got " +
                             ShapeToString(x->shape()));
    }
    if (!to_blocked_) {
      if (x->dtype() != DataType::kFloat) return InvalidArgument("FromBlocked: input 'X' must be float");
      ONNXFLOW_ASSIGN_OR_RETURN(nchw, UnblockedShape(x->shape(), "X"));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat,
                                                                    to_blocked_ ? BlockedShape(nchw) : nchw));
    const int64_t pixels = nchw[2] * nchw[3], blocks = nchw[0] * nchw[1] / kChannelBlock;
    const float* xd = x->data<float>();
    float* yd = y->mutable_data<float>();
    ParallelFor(ctx, blocks, pixels * kChannelBlock, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t at = b * pixels * kChannelBlock;  // the same in both layouts
        if (to_blocked_) {
          Interleave(xd + at, pixels, pixels, yd + at);
        } else {
          Deinterleave(xd + at, pixels, pixels, yd + at);
        }
      }
    });
    return Status::Ok();
  }

 private:
  bool to_blocked_;
};

}  // namespace

Status RegisterBlockedReorders(KernelRegistry& registry) {
  for (bool to_blocked : {true, false}) {
    ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxflowDomain, to_blocked ? "ToBlocked" : "FromBlocked", 1,
                                               kOpenEnded,
                                               [to_blocked](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> {
                                                 return std::unique_ptr<OpKernel>(new ReorderKernel(to_blocked));
                                               }));
  }
  return Status::Ok();
}

}  // namespace onnxflow
