// The channel-blocked layout pass, run at load after the fusions: float 2-D convolutions of group
// 1 with whole blocks of 16 output channels become com.onnxflow BlockedConv, and the pools,
// elementwise ops and channel Concats between them run on the blocked values too
// (ops/blocked/blocked_layout.h). ToBlocked / FromBlocked nodes go where the blocked region meets
// plain readers (other ops, subgraphs, the graph's outputs) or plain inputs; a stem convolution
// (fewer than 16 input channels) reads the plain image itself. Outputs are unchanged.
#pragma once

#include "graph/graph.h"
#include "graph/rewrite.h"

namespace onnxflow::graph {

Status UseBlockedLayout(Graph* graph);

// The rules that run after the layout is chosen (rewrite.h): channel Concats of BlockedConvs become
// convolutions writing into one tensor, two normalizations in a row become one, and a normalization
// takes the activation after it.
std::optional<Patch> JoinConcatsIntoConvs(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> MergeNormalizations(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseNormalizeActivation(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
