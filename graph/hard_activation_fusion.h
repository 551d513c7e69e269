// MobileNetV3's hard activations written out, as exports before opset 14 (PyTorch) and Paddle's
// paddle2onnx write them, become the ONNX ops, which the products then take as epilogues and the
// blocked layout keeps on blocks:
//   HardSigmoid: Clip(Add(Mul(x, a), b), 0, hi) / hi   (Mul optional; "/ hi" as Div or Mul by 1 / hi,
//                absent when hi is 1): alpha a / hi, beta b / hi. relu6(x + 3) / 6 is the common one.
//   HardSwish:   x * HardSigmoid(x) with alpha 1/6 and beta 1/2 (after the rule above), or
//                (x * Clip(Add(x, 3), 0, 6)) / 6 (Paddle's order: the product before the division).
// Left as an ElementwiseChain, each was a pass of its own that also cut the blocked region, with a
// reorder on either side (PP-OCR's direction classifier: 29 reorders in 127 nodes).
#pragma once

#include "graph/rewrite.h"

namespace onnxflow::graph {

// Looks for the pattern's last node (the division, or the Clip when hi is 1) at `id`.
std::optional<Patch> FuseHardSigmoid(Rewriter& r, NodeGraph::Id id);

// Looks for the pattern's last node (the Mul by HardSigmoid, or the division) at `id`.
std::optional<Patch> FuseHardSwish(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
