// Inference fusions, run at load after constant folding:
//  - LayerNormalization written out as nine ops becomes one LayerNormalization (norm_fusion.h);
//  - BatchNormalization after a Conv with constant weights is folded into the Conv's weights and
//    bias (one pass over the output instead of two), and so is a Mul or Add by a constant per
//    output channel (Caffe2's exports write a normalization's affine part that way);
//  - an activation (Relu, LeakyRelu, Clip with constant bounds, Sigmoid, Tanh, HardSigmoid, and
//    Swish written as x * Sigmoid(x)) after a float Conv, Gemm or MatMul becomes the producer's
//    epilogue (com.onnxflow FusedConv, FusedGemm, FusedMatMul), applied while the output tile is
//    still in registers/cache.
//  - a constant bias vector added to a MatMul with constant weights becomes FusedMatMul's third
//    input, added in the epilogue;
// A pair is fused only when the intermediate value has no other reader and is not a graph output.
#pragma once

#include "graph/graph.h"
#include "graph/rewrite.h"
#include "ops/framework/registry.h"

namespace onnxflow::graph {

inline constexpr const char* kFusedDomain = kOnnxflowDomain;

// The rules FuseForInference runs, in its order (rewrite.h; each has a GraphTest in
// graph/rules_test.cc).
std::optional<Patch> RemovePassThrough(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FoldBatchNorm(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FoldChannelAffine(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseMatMulBias(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseResidual(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseSwish(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseGelu(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseGeluTanh(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseBiasGelu(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> FuseActivation(Rewriter& r, NodeGraph::Id id);

// Fails only on a rule that broke the graph (rewrite.h): a bug, reported instead of run.
Status FuseForInference(Graph* graph);

}  // namespace onnxflow::graph
