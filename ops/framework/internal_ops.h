// Every internal op: the com.onnxflow nodes the load-time passes (graph/) write and only this
// runtime's kernels read. Each op's attributes are a typed spec owned by the kernel that runs it,
// with WriteTo (what a pass calls) and Parse (what the kernel's factory calls), so the attribute
// names are spelled in that one place:
//
//   op                          spec (header)                               pass that makes it
//   FusedConv                   FusedActivationSpec (ops/math/fused_activation.h)  graph/fusion.cc
//   FusedGemm                   FusedActivationSpec                         graph/fusion.cc
//   FusedMatMul                 FusedActivationSpec + output_type (graph/blocked_half.cc)  graph/fusion.cc
//   ElementwiseChain            ChainSpec (ops/activation/elementwise_chain.h)  graph/chain_fusion.cc
//   BlockedConv                 BlockedConvSpec (ops/blocked/blocked_layout.h)  graph/blocked_layout.cc
//   BlockedDepthwiseConv        FusedActivationSpec                         graph/blocked_layout.cc
//   BlockedBatchNormalization   FusedActivationSpec (+ epsilon; input 5: a PRelu's slopes)  graph/blocked_layout.cc
//   BlockedGroupNormalization   FusedActivationSpec + num_groups, epsilon (ops/blocked/blocked_group_norm.cc)  graph/blocked_layout.cc
//   BlockedMaxPool, BlockedAveragePool, BlockedGlobalMaxPool, BlockedGlobalAveragePool
//                               the ONNX pool's own attributes              graph/blocked_layout.cc
//   BlockedResize, BlockedShape Resize's mode attributes + channels (ops/blocked/blocked_resize.h)  graph/blocked_layout.cc
//   BlockedConvTranspose        ConvTranspose's own attributes + FusedActivationSpec (ops/blocked/blocked_conv_transpose.cc)  graph/blocked_layout.cc
//   BlockedPad                  BlockedPadSpec (ops/blocked/blocked_pad.h)  graph/blocked_layout.cc
//   ToBlocked                   FromBlockedSpec (the channels X must have)  graph/blocked_layout.cc
//   FromBlocked                 FromBlockedSpec (ops/blocked/blocked_layout.h)  graph/blocked_layout.cc
//   FusedAttention              FusedAttentionSpec (ops/contrib/fused_attention.h)  graph/attention_fusion.cc
//   AddLayerNormalization       epsilon, rms (SkipLayerNormalization's) + output_type (graph/blocked_half.cc)  graph/norm_fusion.cc
//   DequantizeAccumulator       relu                                        graph/dynamic_quant_fusion.cc
//   QLinearConvNhwc             QLinearConv's own attributes (ops/math/quant_conv.cc)  graph/quant_layout.cc
//   ByteLookup                  axis of a [C, 256] table; input 2 Affine (ops/quant_ms/qlinear_lookup.cc)  graph/qdq_lookup.cc
//   MaxPoolNhwc                 MaxPool's own attributes (ops/quant_ms/qlinear_maxpool_nhwc.cc)  graph/quant_layout.cc
//   GatedActivation             GatedActivationSpec (ops/math/gated_activation.h)  graph/gated_ffn.cc
//
// All are version 1 of kOnnxflowDomain; a model may not use them (they are not a public format).
#pragma once

#include "ops/framework/registry.h"  // kOnnxflowDomain

namespace onnxflow::internal_ops {

inline constexpr int kVersion = 1;

inline constexpr char kFusedConv[] = "FusedConv";
inline constexpr char kFusedGemm[] = "FusedGemm";
inline constexpr char kFusedMatMul[] = "FusedMatMul";
inline constexpr char kElementwiseChain[] = "ElementwiseChain";
inline constexpr char kBlockedConv[] = "BlockedConv";
inline constexpr char kBlockedDepthwiseConv[] = "BlockedDepthwiseConv";
inline constexpr char kBlockedBatchNormalization[] = "BlockedBatchNormalization";
// GroupNormalization, and InstanceNormalization as one-channel groups, on blocked values.
inline constexpr char kBlockedGroupNormalization[] = "BlockedGroupNormalization";
inline constexpr char kBlockedMaxPool[] = "BlockedMaxPool";
inline constexpr char kBlockedAveragePool[] = "BlockedAveragePool";
inline constexpr char kBlockedGlobalMaxPool[] = "BlockedGlobalMaxPool";
inline constexpr char kBlockedGlobalAveragePool[] = "BlockedGlobalAveragePool";
inline constexpr char kBlockedResize[] = "BlockedResize";
inline constexpr char kBlockedShape[] = "BlockedShape";
// An up-sampling network's ConvTranspose, stride phase by stride phase on the blocked conv tile.
inline constexpr char kBlockedConvTranspose[] = "BlockedConvTranspose";
// Pad of the spatial axes of a blocked value (constant, reflect, edge).
inline constexpr char kBlockedPad[] = "BlockedPad";
inline constexpr char kToBlocked[] = "ToBlocked";
inline constexpr char kFromBlocked[] = "FromBlocked";
inline constexpr char kFusedAttention[] = "FusedAttention";
// LayerNormalization(Add(a, b)) over the last axis: com.microsoft SkipLayerNormalization's kernel
// (inputs a, b, gamma, beta?; outputs y and, as output 3, the sum when something else reads it),
// which also takes operands that broadcast as Add's do; rms = 1: SkipSimplifiedLayerNormalization's.
inline constexpr char kAddLayerNormalization[] = "AddLayerNormalization";
// Cast(int32 -> float) -> Mul(scale) -> Add(bias per channel)? -> Relu? after a ConvInteger
// (ops/quant/dequantize_accumulator.h).
inline constexpr char kDequantizeAccumulator[] = "DequantizeAccumulator";
inline constexpr char kQLinearConvNhwc[] = "QLinearConvNhwc";
inline constexpr char kByteLookup[] = "ByteLookup";
inline constexpr char kMaxPoolNhwc[] = "MaxPoolNhwc";
// act(P[..., :F]) * P[..., F:]: a gated feed-forward block's two products merged into one.
inline constexpr char kGatedActivation[] = "GatedActivation";

inline constexpr const char* kAll[] = {
    kFusedConv,         kFusedGemm,          kFusedMatMul,         kElementwiseChain,
    kBlockedConv,       kBlockedDepthwiseConv, kBlockedBatchNormalization, kBlockedMaxPool,
    kBlockedAveragePool, kBlockedGlobalMaxPool, kBlockedGlobalAveragePool, kToBlocked,
    kFromBlocked,       kFusedAttention,     kAddLayerNormalization, kDequantizeAccumulator,
    kQLinearConvNhwc,   kByteLookup,         kMaxPoolNhwc,          kBlockedResize,
    kBlockedShape,      kGatedActivation,    kBlockedGroupNormalization, kBlockedConvTranspose,
    kBlockedPad,
};

}  // namespace onnxflow::internal_ops
