// com.onnxflow BlockedPad (blocked_pad.cc): Pad of the spatial axes of a channel-blocked value, the
// reflect padding before each convolution of a style-transfer network.
#pragma once

#include <cstdint>
#include <string>

#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"

namespace onnxflow {

// BlockedPad's attributes: the mode, the pads of H and W (not negative), the constant's value.
// The pass (graph/blocked_layout.cc) gives it a finite value only: it also fills the pad lanes,
// which a following convolution's zero weights must cancel.
struct BlockedPadSpec {
  enum class Mode : int8_t { kConstant, kReflect, kEdge };
  Mode mode = Mode::kConstant;
  int64_t top = 0, left = 0, bottom = 0, right = 0;
  float value = 0.0f;

  void WriteTo(onnx::NodeProto& node) const;
  static Result<BlockedPadSpec> Parse(const KernelInfo& info);
  // ONNX Pad's mode attribute ("constant", "reflect", "edge"); nothing for any other.
  static bool ModeOf(const std::string& name, Mode* mode);
};

Status RegisterBlockedPad(KernelRegistry& registry);

}  // namespace onnxflow
