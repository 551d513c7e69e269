// InstanceNormalization and GroupNormalization (see instance_group_norm.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterInstanceGroupNorm(KernelRegistry& registry);

}  // namespace onnxflow
