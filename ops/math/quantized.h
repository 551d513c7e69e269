// MatMulInteger, QLinearMatMul, ConvInteger, QLinearConv.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterQuantizedMathKernels(KernelRegistry& registry);

}  // namespace onnxflow
