// The com.microsoft quantized ops (kernels.h lists them).
#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_QUANT_MS_REGISTRARS(X)             \
  X(RegisterQLinearBinary)  /* qlinear_binary.cc */ \
  X(RegisterQLinearUnary)  /* qlinear_unary.cc */   \
  X(RegisterQLinearConcat)  /* qlinear_concat.cc */ \
  X(RegisterQLinearPool)  /* qlinear_pool.cc */     \
  X(RegisterMatMulNBits)  /* matmul_nbits.cc */     \
  X(RegisterByteLookup)  /* qlinear_lookup.cc */   \
  X(RegisterMaxPoolNhwc)  /* qlinear_maxpool_nhwc.cc */ \
  X(RegisterQLinearSoftmax)  /* qlinear_softmax.cc */ \
  X(RegisterQLinearWhere)  /* qlinear_where.cc */

namespace onnxflow {
namespace quant_ms {
ONNXFLOW_QUANT_MS_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace quant_ms

Status RegisterQuantMsKernels(KernelRegistry& registry);

}  // namespace onnxflow
