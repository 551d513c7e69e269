// The channel-blocked layout pass, run at load after the fusions: float 2-D convolutions of group
// 1 with whole blocks of 16 output channels become com.onnxflow BlockedConv, and the pools,
// elementwise ops and channel Concats between them run on the blocked values too
// (ops/blocked/blocked_layout.h). ToBlocked / FromBlocked nodes go where the blocked region meets
// plain readers (other ops, subgraphs, the graph's outputs) or plain inputs; a stem convolution
// (fewer than 16 input channels) reads the plain image itself. Outputs are unchanged.
#pragma once

#include "graph/graph.h"

namespace onnxflow::graph {

void UseBlockedLayout(Graph* graph);

}  // namespace onnxflow::graph
