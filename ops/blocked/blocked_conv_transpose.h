// com.onnxflow BlockedConvTranspose (blocked_conv_transpose.cc): an up-sampling network's
// ConvTranspose on channel-blocked values.
#pragma once

#include <cstdint>

#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"

namespace onnxflow {

// Its op name (com.onnxflow, version internal_ops::kVersion; attributes: ConvTranspose's and
// FusedActivationSpec). It belongs in ops/framework/internal_ops.h's list with the others.
inline constexpr char kBlockedConvTransposeOp[] = "BlockedConvTranspose";

Status RegisterBlockedConvTranspose(KernelRegistry& registry);

}  // namespace onnxflow
