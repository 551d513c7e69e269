// ConvTranspose (all versions).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterConvTransposeKernels(KernelRegistry& registry);

}  // namespace onnxflow
