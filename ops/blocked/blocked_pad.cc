// com.onnxflow BlockedPad: X [N, C/16, H, W, 16] -> [N, C/16, top + H + bottom, left + W + right,
// 16], each padded pixel a whole block of 16 channels: the reflected or nearest edge pixel's, or
// the constant. One pass, a row of the output per step (the middle of a row one copy); a
// style-transfer network pads every convolution's input so, and a plain Pad there costs a reorder
// out of the blocked layout and one back in around it.
#include "ops/blocked/blocked_pad.h"

#include <algorithm>
#include <string>

#include "ops/blocked/blocked_layout.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/parallel.h"

namespace onnxflow {
namespace {

using Mode = BlockedPadSpec::Mode;

// The input index that output index `o` (of an axis padded by `before`) copies; -1: the constant.
int64_t Source(Mode mode, int64_t o, int64_t before, int64_t n) {
  int64_t i = o - before;
  if (i >= 0 && i < n) return i;
  if (mode == Mode::kConstant) return -1;
  if (mode == Mode::kEdge) return i < 0 ? 0 : n - 1;
  return i < 0 ? -i : 2 * (n - 1) - i;  // reflect: the pass and Compute keep pads below n
}

class BlockedPadKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(BlockedPadSpec spec, BlockedPadSpec::Parse(info));
    return std::unique_ptr<OpKernel>(new BlockedPadKernel(spec));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat) return InvalidArgument("BlockedPad: input 'X' must be float");
    ONNXFLOW_ASSIGN_OR_RETURN(Shape nchw, UnblockedShape(x->shape(), "X"));
    const int64_t h_n = nchw[2], w_n = nchw[3];
    const BlockedPadSpec& s = spec_;
    const bool pads_rows = s.top > 0 || s.bottom > 0, pads_cols = s.left > 0 || s.right > 0;
    if (s.mode == Mode::kReflect && ((pads_rows && std::max(s.top, s.bottom) >= h_n) ||
                                     (pads_cols && std::max(s.left, s.right) >= w_n))) {
      return InvalidArgument("BlockedPad: reflect pads (" + std::to_string(s.top) + ", " + std::to_string(s.left) +
                             ", " + std::to_string(s.bottom) + ", " + std::to_string(s.right) +
                             ") must be smaller than the input's H and W, got " + ShapeToString(x->shape()));
    }
    if (s.mode == Mode::kEdge && ((pads_rows && h_n == 0) || (pads_cols && w_n == 0))) {
      return InvalidArgument("BlockedPad: edge padding of an empty axis, input " + ShapeToString(x->shape()));
    }
    const int64_t oh_n = h_n + s.top + s.bottom, ow_n = w_n + s.left + s.right;
    const Shape y_shape = {x->dim(0), x->dim(1), oh_n, ow_n, kChannelBlock};
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, y_shape));
    if (y->size() == 0) return Status::Ok();
    const float* xd = x->data<float>();
    float* yd = y->mutable_data<float>();
    const int64_t planes = x->dim(0) * x->dim(1), in_row = w_n * kChannelBlock, out_row = ow_n * kChannelBlock;
    ParallelFor(ctx, planes * oh_n, out_row, [&](int64_t r0, int64_t r1) {
      for (int64_t r = r0; r < r1; ++r) {
        const int64_t plane = r / oh_n, oh = r % oh_n;
        float* dst = yd + r * out_row;
        const int64_t ih = Source(s.mode, oh, s.top, h_n);
        if (ih < 0) {
          std::fill(dst, dst + out_row, s.value);
          continue;
        }
        const float* src = xd + (plane * h_n + ih) * in_row;
        for (int64_t ow = 0; ow < s.left; ++ow) CopyPixel(src, Source(s.mode, ow, s.left, w_n), dst + ow * kChannelBlock);
        std::copy(src, src + in_row, dst + s.left * kChannelBlock);
        for (int64_t ow = s.left + w_n; ow < ow_n; ++ow) {
          CopyPixel(src, Source(s.mode, ow, s.left, w_n), dst + ow * kChannelBlock);
        }
      }
    });
    return Status::Ok();
  }

 private:
  explicit BlockedPadKernel(const BlockedPadSpec& spec) : spec_(spec) {}

  void CopyPixel(const float* row, int64_t iw, float* dst) const {
    if (iw < 0) {
      std::fill(dst, dst + kChannelBlock, spec_.value);
    } else {
      std::copy(row + iw * kChannelBlock, row + (iw + 1) * kChannelBlock, dst);
    }
  }

  BlockedPadSpec spec_;
};

}  // namespace

bool BlockedPadSpec::ModeOf(const std::string& name, Mode* mode) {
  if (name == "constant") {
    *mode = Mode::kConstant;
  } else if (name == "reflect") {
    *mode = Mode::kReflect;
  } else if (name == "edge") {
    *mode = Mode::kEdge;
  } else {
    return false;
  }
  return true;
}

void BlockedPadSpec::WriteTo(onnx::NodeProto& node) const {
  static const char* const kNames[] = {"constant", "reflect", "edge"};
  SetAttribute(node, "mode", std::string(kNames[static_cast<int>(mode)]));
  SetAttribute(node, "pads", std::vector<int64_t>{top, left, bottom, right});
  SetAttribute(node, "value", value);
}

Result<BlockedPadSpec> BlockedPadSpec::Parse(const KernelInfo& info) {
  BlockedPadSpec s;
  if (!ModeOf(info.GetString("mode", "constant"), &s.mode)) {
    return InvalidArgument("BlockedPad: mode must be constant, reflect or edge, got '" +
                           info.GetString("mode", "constant") + "'");
  }
  const std::vector<int64_t> pads = info.GetInts("pads");
  if (pads.size() != 4 || *std::min_element(pads.begin(), pads.end()) < 0) {
    return InvalidArgument("BlockedPad: pads must be 4 values (top, left, bottom, right), none negative");
  }
  s.top = pads[0];
  s.left = pads[1];
  s.bottom = pads[2];
  s.right = pads[3];
  s.value = info.GetFloat("value", 0.0f);
  return s;
}

ONNXFLOW_REGISTRAR Status RegisterBlockedPad(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kBlockedPad, internal_ops::kVersion, kOpenEnded, BlockedPadKernel::Create);
}

}  // namespace onnxflow
