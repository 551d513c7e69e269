// The channel-blocked layout's ops (blocked_layout.h), all in the com.onnxflow domain: only the
// graph pass graph/blocked_layout.cc writes them into a model.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedKernels(KernelRegistry& registry);

}  // namespace onnxflow
