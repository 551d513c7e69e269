// float16 and bfloat16 graphs compute in float (issue 21).
//
// Every kernel here computes 16-bit floats by widening them to float, and the fusions and the
// channel-blocked layout take float only, so a half model ran op by op, widening and narrowing each
// value again at every node: 2.5-3.3x slower than the same model in float. This pass makes the
// float ops of a half graph run on float values: each 16-bit value they read or write gets a float
// twin, a Cast is added only where a value crosses into or out of that region (graph inputs and
// outputs, ops that stay 16-bit), and 16-bit constants they read are widened once, here (the
// weights of MatMul, Gemm and Conv excepted: those stay in 16 bits, ops/math/constant_b.h,
// ops/blocked/blocked_conv.cc). The
// model's outputs keep their declared types; intermediate values are rounded to 16 bits only where
// the graph leaves float, so results are at least as accurate as computing in half.
#pragma once

#include "graph/graph.h"

namespace onnxflow::graph {

// `onnx_opset` is the model's default-domain opset (Cast's form depends on it); subgraphs are
// rewritten too, each region within its own scope.
Status ComputeHalfInFloat(Graph* graph, int onnx_opset);

}  // namespace onnxflow::graph
