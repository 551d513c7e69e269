// One registration function per kernel file of the attention family; register.cc calls them all.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {
namespace attention {

Status RegisterAttention(KernelRegistry& registry);         // attention.cc
Status RegisterRotaryEmbedding(KernelRegistry& registry);   // rotary_embedding.cc
Status RegisterLinearAttention(KernelRegistry& registry);   // linear_attention.cc
Status RegisterFlexAttention(KernelRegistry& registry);     // flex_attention.cc

}  // namespace attention
}  // namespace onnxflow
