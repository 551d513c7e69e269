#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_ATTENTION_REGISTRARS(X)                \
  X(RegisterAttention)  /* attention.cc */              \
  X(RegisterRotaryEmbedding)  /* rotary_embedding.cc */ \
  X(RegisterLinearAttention)  /* linear_attention.cc */ \
  X(RegisterFlexAttention)  /* flex_attention.cc */

namespace onnxflow {
namespace attention {
ONNXFLOW_ATTENTION_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace attention

Status RegisterAttentionKernels(KernelRegistry& registry);

}  // namespace onnxflow
