// One registration function per kernel file of the contrib family; register.cc calls them all.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {
namespace contrib {

Status RegisterFusedOps(KernelRegistry& registry);        // fused_ops.cc: FusedConv, FusedGemm, FusedMatMul, ...
Status RegisterGeluOps(KernelRegistry& registry);         // gelu.cc: Gelu, FastGelu, BiasGelu, QuickGelu, BiasAdd, BiasSoftmax
Status RegisterNormOps(KernelRegistry& registry);         // norms.cc: Skip*/Simplified*/Embed LayerNormalization
Status RegisterAttentionOps(KernelRegistry& registry);    // attention.cc: Attention, MultiHeadAttention, GroupQueryAttention
Status RegisterRotaryEmbedding(KernelRegistry& registry); // rotary.cc
Status RegisterMiscOps(KernelRegistry& registry);
Status RegisterFusedAttention(KernelRegistry& registry);  // fused_attention.cc: com.onnxflow FusedAttention         // misc.cc: GatherBlockQuantized, Trilu, Range, Inverse, NhwcMaxPool

}  // namespace contrib
}  // namespace onnxflow
