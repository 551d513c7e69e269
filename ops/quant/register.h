#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_QUANT_REGISTRARS(X)                                 \
  X(RegisterQuantizeLinear)  /* quantize_linear.cc */                \
  X(RegisterDequantizeLinear)  /* dequantize_linear.cc */            \
  X(RegisterDynamicQuantizeLinear)  /* dynamic_quantize_linear.cc */ \
  X(RegisterDequantizeAccumulator)  /* dequantize_accumulator.cc */

namespace onnxflow {
namespace quant_ops {
ONNXFLOW_QUANT_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace quant_ops

Status RegisterQuantKernels(KernelRegistry& registry);

}  // namespace onnxflow
