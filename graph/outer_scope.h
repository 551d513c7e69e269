// What a subgraph (If's branches, a Loop's or Scan's body) reads from enclosing scopes, made known
// to it: a constant becomes one of its own (the same tensor, its storage shared, not copied), and
// an enclosing graph input's declaration is kept in Graph::outer_inputs.
//
// Why: a kernel packs or reads ahead only what it is handed as a constant (KernelInfo's
// constant_input), and the passes fuse and fold only on constants of the graph they walk. A
// decoder exported with its cache branches merged (Optimum's decoder_model_merged.onnx: an If whose
// two branches each hold the whole network, every weight an initializer of the main graph) read
// all its weights as outer values, so every MatMul inside packed nothing at load: 8 chained
// 2048 x 2048 MatMuls at M = 1 ran in 6.6 ms inside an If against 4.2 ms outside, and a MatMulNBits
// or a DequantizeLinear -> MatMul of such a model never met its weights as constants at all.
//
// A decoder's caches are the main graph's inputs: inside the branches the attention fusion reads
// their declared shapes from outer_inputs (a key-value cache read in place, not concatenated into
// a copy every step). A Cast of such an input made in an enclosing graph (a float16 decoder's
// caches, rounded to half there) is known by the input's declaration too.
//
// A constant that is also a graph input of the main graph (an initializer the caller may
// override) stays an outer value. Nested scopes inherit down the chain (the load refuses a
// subgraph that redefines an enclosing name, so a name means one value everywhere).
#pragma once

#include "graph/graph.h"

namespace onnxflow::graph {

// Run at the start of the load passes and by constant folding (which makes constants of Constant
// nodes and of what they feed). Returns how many constants it handed down to subgraphs.
int64_t InheritOuterScope(Graph* graph);

}  // namespace onnxflow::graph
