// The quant family's kernels, one registration function per file, called by register.cc.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {
namespace quant_ops {

Status RegisterQuantizeLinear(KernelRegistry& registry);         // quantize_linear.cc
Status RegisterDequantizeLinear(KernelRegistry& registry);       // dequantize_linear.cc
Status RegisterDynamicQuantizeLinear(KernelRegistry& registry);  // dynamic_quantize_linear.cc

}  // namespace quant_ops
}  // namespace onnxflow
