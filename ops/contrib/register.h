// ONNX Runtime's own operators (domain com.microsoft, and the default-domain LayerNormalization and
// SimplifiedLayerNormalization it registers below opset 17): what files saved by ONNX Runtime and
// by exporters that target it contain.
#pragma once

#include "ops/framework/registry.h"

// One line per kernel file of the family: the function that file defines to register its ops.
// A new kernel file adds its line here; register.cc calls them in this order.
#define ONNXFLOW_CONTRIB_REGISTRARS(X)                \
  X(RegisterFusedOps)  /* fused_ops.cc */             \
  X(RegisterGeluOps)  /* gelu.cc */                   \
  X(RegisterNormOps)  /* norms.cc */                  \
  X(RegisterAttentionOps)  /* attention.cc */         \
  X(RegisterQAttention)  /* qattention.cc */          \
  X(RegisterRotaryEmbedding)  /* rotary.cc */         \
  X(RegisterMiscOps)  /* misc.cc */                   \
  X(RegisterFusedAttention)  /* fused_attention.cc */ \
  X(RegisterCDist)  /* cdist.cc */                    \
  X(RegisterLegacyMsOps)  /* legacy_ms.cc */          \
  X(RegisterCropAndResize)  /* crop_and_resize.cc */  \
  X(RegisterSparseAttention)  /* sparse_attention.cc */ \
  X(RegisterDecoderMaskedMha)  /* decoder_masked_mha.cc */

namespace onnxflow {
namespace contrib {
ONNXFLOW_CONTRIB_REGISTRARS(ONNXFLOW_DECLARE_REGISTRAR)
}  // namespace contrib

// Call after the other families: several of these wrap kernels registered there (Conv, Gemm,
// LayerNormalization, Trilu, Range, Pad, GatherND).
Status RegisterContribKernels(KernelRegistry& registry);

}  // namespace onnxflow
