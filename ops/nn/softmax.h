// Softmax, LogSoftmax, Hardmax (see softmax.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterSoftmaxOps(KernelRegistry& registry);

}  // namespace onnxflow
