// com.onnxflow BlockedConvTranspose (blocked_conv_transpose.cc): an up-sampling network's
// ConvTranspose on channel-blocked values.
#pragma once

#include <cstdint>

#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedConvTranspose(KernelRegistry& registry);

}  // namespace onnxflow
