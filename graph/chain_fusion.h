// Elementwise chain fusion, run at load after the epilogue fusions: consecutive float32
// elementwise ops (Add/Sub/Mul/Div/Max/Min with a scalar constant or the chain's own input as the
// other operand; Abs, Exp, Erf, Sqrt, ...; Relu, Sigmoid, Tanh, Gelu, Clip with constant bounds,
// ...), each the only reader of the one before, become one com.onnxflow ElementwiseChain node
// (ops/activation/elementwise_chain.h) that makes one pass over memory. GELU written out (Div,
// Erf, Add, Mul, Mul), Swish (Sigmoid, Mul) and scale-shift-activate runs are the usual chains.
// A chain needs its input's type to be float32 as far as the load can tell; a value read by
// anything else, or a graph output, ends a chain.
#pragma once

#include <vector>

#include "graph/rewrite.h"

namespace onnxflow::graph {

std::optional<Patch> FuseElementwiseChain(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
