// LayerNormalization written out, as exporters before opset 17 write it (BERT's):
//   mean = ReduceMean(x, axes [-1]); d = Sub(x, mean); var = ReduceMean(Mul(d, d) or Pow(d, 2), axes [-1])
//   y = Div(d, Sqrt(Add(var, epsilon))) -> Mul(y, scale) -> Add(y, B)   (the Add optional)
// becomes one LayerNormalization (17) node over the last axis: one pass over each row for its
// moments and one to normalize it, instead of nine ops and six tensors. scale and B must be float
// constant vectors, epsilon a float constant scalar, and every value in between read only inside
// the pattern.
#pragma once

#include <vector>

#include "graph/rewrite.h"

namespace onnxflow::graph {

// A fusion rule (fusion_util.h) that looks for the pattern's Div at `index`.
std::optional<Patch> FuseLayerNormalization(Rewriter& r, NodeGraph::Id id);

// RMS normalization written out (LLaMA's RMSNorm, T5's LayerNorm): x / Sqrt(ReduceMean(x^2, last
// axis) + epsilon) * weight, the division also as Mul(x, Reciprocal(...)), becomes ONNX Runtime's
// SimplifiedLayerNormalization over the last axis (one pass for the moment, one to scale) where x
// is float and weight a float constant vector; x may have other readers (the residual stream).
std::optional<Patch> FuseRmsNormalization(Rewriter& r, NodeGraph::Id id);

// The residual connection of a transformer layer, LayerNormalization(Add(a, b)) over the last axis
// in float (ONNX Runtime's SkipLayerNormalization; with SimplifiedLayerNormalization, its RMS form
// SkipSimplifiedLayerNormalization), becomes one com.onnxflow AddLayerNormalization
// that sums each row as it normalizes it: the sum is written only when something else reads it (a
// pre-norm model's residual stream), as the node's output 3. Looks for the LayerNormalization at
// `index`; its Mean and InvStdDev outputs must be unused.
std::optional<Patch> FuseSkipLayerNormalization(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
