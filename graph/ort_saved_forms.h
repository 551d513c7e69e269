// Files ONNX Runtime saved after its graph optimizations carry its own fused ops where the plain
// export had ONNX ones. Where such an op is one of onnxflow's internal ops under another spelling,
// it becomes that op at load, so that every rule after it (the blocked layout, the epilogues) sees
// the same graph it sees in the plain export. The kernels of the com.microsoft ops stay for a load
// without these rules (SessionOptions::optimize off).
#pragma once

#include "graph/rewrite.h"

namespace onnxflow::graph {

// com.microsoft FusedConv (Conv + activation, + Add as a fourth input Z, written by ONNX Runtime's
// extended level) -> com.onnxflow FusedConv: Y = act(conv(X, W) + B + Z), with `activation_params`
// read as the epilogue's alpha and beta. Float only, like the internal op; an activation the epilogue
// does not know stays with the com.microsoft kernel, which names it. A wake-word model's
// 19 FusedConv(LeakyRelu) ran outside the blocked layout: 0.93 ms against 0.79 as exported.
std::optional<Patch> AdoptSavedFusedConv(Rewriter& r, NodeGraph::Id id);

// Shape(x, start = 0) without `end`, as ONNX Runtime saves every Shape, -> Shape(x): the same
// values, in the spelling the rules reading shapes at run time match (the heads' Reshape entries of
// a dynamic-axes BART, which left its attention and q/k/v projections unfused as saved).
std::optional<Patch> DropShapeStartZero(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
