// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (see loss.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterLosses(KernelRegistry& registry);

}  // namespace onnxflow
