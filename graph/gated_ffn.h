// Gated feed-forward blocks as one product: down(act(x Wg) * (x Wu)), LLaMA / Mistral / Qwen's
// SwiGLU, T5 v1.1's and Gemma's GELU-tanh gate, GEGLU, and Phi-3's single product x [Wg | Wu]
// split in two halves. The two products of one x run as one GEMM on [Wg | Wu] (A read and split
// over the cores once, N twice as wide), and com.onnxflow GatedActivation (ops/math/
// gated_activation.h) writes act(left half) * right half in one pass instead of the activation's
// and the Mul's. Internal to graph/.
#pragma once

#include "graph/rewrite.h"

namespace onnxflow::graph {

// At Mul(G, U) (operands in either order): G = act(x Wg [+ bg]) and U = x Wu [+ bu], each product
// a MatMul or a FusedMatMul (its bias) of constant float or 16-bit weights [K, F] of one type, the
// same x; act the epilogue FuseSwish / FuseGelu / FuseActivation gave the gate's FusedMatMul
// (Swish, erf GELU, Sigmoid, Relu, Tanh), or a node after a plain product: com.microsoft FastGelu
// (one input) / Gelu / QuickGelu, ONNX Gelu (either form) / Swish / Sigmoid / Relu / Tanh, or
// x * Sigmoid(x) written out. Or G and U are the two halves of one such product of width 2F, cut by
// Split(axis -1, two equal parts) or by two Slices along axis -1 (Phi-3). Every value between the
// products and the Mul is read by the pattern alone. Writes one product of x with [Wg | Wu] (and
// [bg | bu], zeros for a missing one) and GatedActivation of it in the Mul's place.
std::optional<Patch> FuseGatedFeedForward(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
