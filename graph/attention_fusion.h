// The written-out attention of a transformer's plain ONNX export (and of the same model saved by
// ONNX Runtime, whose FusedMatMul carries the scale) as one com.onnxflow FusedAttention node
// (ops/contrib/fused_attention.h). Internal to graph/.
#pragma once

#include <vector>

#include "graph/rewrite.h"

namespace onnxflow::graph {

// At the MatMul of the probabilities and V, matches
//   q4 -> Transpose(0,2,1,3) [-> Mul/Div by a scalar]  (Q)
//   k4 -> Transpose(0,2,3,1), or Transpose(0,2,1,3) -> Transpose(0,1,3,2)  (K^T)
//   MatMul(Q, K^T) (or
//         com.microsoft FusedMatMul, alpha and transB) [-> Div/Mul by a scalar] [-> Add(mask)]
//         -> Softmax(last axis) -> MatMul(., Transpose(v4, 0,2,1,3)) [-> Transpose(0,2,1,3)]
// where every value inside is read by the pattern alone, and writes FusedAttention(q4, k4, v4,
// mask?) in the place of its last node. Q, K (before its Transpose(0,1,3,2)) and V may instead be
// the three parts of one projection P, as exports with one qkv Linear write them (timm's ViT):
//   Transpose(Reshape(P, [B, S, 3, N, D]), [2,0,3,1,4]) -> Gather(i) or Split + Squeeze (unbind)
// and the fused node then reads P packed (FusedAttention(P, "", "", mask?)). Anything else leaves
// the graph as it is.
std::optional<Patch> FuseAttention(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
