// com.onnxflow ToBlocked / FromBlocked (reorder.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedReorders(KernelRegistry& registry);

}  // namespace onnxflow
