// Products that share their input, x * W1, x * W2, ... with constant float weights of the same
// height (a transformer layer's query, key and value projections; any fan-out of linear layers),
// become one product with the weights side by side, x * [W1 | W2 | ...] (+ the biases side by
// side), and a Split that gives each its old output. x is packed once instead of once per product,
// and one wide product splits over cores better than several narrow ones: BERT-base's three
// projections per layer packed the same 128 x 768 input three times (about 1.8 ms of a 70 ms run).
// Products with an activation in their epilogue keep it and stay apart.
#pragma once

#include "graph/rewrite.h"

namespace onnxflow::graph {

// A fusion rule (fusion_util.h): fires at the first of the siblings that read the input of the
// MatMul or FusedMatMul at `id`.
std::optional<Patch> FuseSiblingMatMuls(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
