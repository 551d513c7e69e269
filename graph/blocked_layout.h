// The channel-blocked layout pass, run at load after the fusions: float 2-D convolutions of group
// 1 with whole blocks of 16 output channels become com.onnxflow BlockedConv, and the pools,
// elementwise ops and channel Concats between them run on the blocked values too
// (ops/blocked/blocked_layout.h). ToBlocked / FromBlocked nodes go where the blocked region meets
// plain readers (other ops, subgraphs, the graph's outputs) or plain inputs; a stem convolution
// (fewer than 16 input channels) reads the plain image itself. Group and instance normalizations
// of blocked values, and 7x7 depthwise convolutions of plain ones, run blocked too; so do
// ConvTranspose of group 1 and Pad of the spatial axes (up-sampling networks). Outputs are
// unchanged.
#pragma once

#include "graph/graph.h"
#include "graph/rewrite.h"

namespace onnxflow::graph {

Status UseBlockedLayout(Graph* graph);

// Before the layout: torch.onnx's Reshape -> InstanceNormalization -> Reshape export of GroupNorm
// becomes GroupNormalization (18), which the layout runs blocked.
std::optional<Patch> FuseGroupNormExport(Rewriter& r, NodeGraph::Id id);

// The rules that run after the layout is chosen (rewrite.h): channel Concats of BlockedConvs become
// convolutions writing into one tensor, two normalizations in a row become one, a per-channel
// affine map after a group normalization goes into its scale and B, a normalization takes the
// activation after it (SiLU written out included), and a transposed convolution the normalization
// or activation after it; then a squeeze-and-excitation gate's Mul goes into the 1 x 1 convolution
// that reads the product (graph/channel_scale_fusion.h).
std::optional<Patch> JoinConcatsIntoConvs(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> MergeNormalizations(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> MergeAffineIntoGroupNorm(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseNormalizeActivation(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseIntoConvTranspose(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
