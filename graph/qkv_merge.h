// The query, key and value projections of one attention as one product: a transformer's plain
// export projects its hidden states three times (MatMul [+ Add bias], each reshaped into heads);
// FuseAttention (attention_fusion.h) reads the three products. Merged, the GEMM runs once on
// [Wq | Wk | Wv]: A is read and split over the cores once, and N = 3H keeps every core's strips
// full (BERT-base's 768 x 768 products ran at 257-330 GFLOP/s on two cores, its 768 x 3072 ones at
// 310-352). FusedAttention then reads q, k and v in place in the one product (its packed input).
// Internal to graph/.
#pragma once

#include "graph/rewrite.h"

namespace onnxflow::graph {

// At a FusedAttention whose q, k and v (BSND, no cache) are each Reshape(P, [d0, d1, N, D]) with
// P = MatMul(x, W) or a FusedMatMul(x, W, bias) without an activation, the three of one x, float
// weights [K, N * D] and biases, one N and one (d0, d1), every value read by the pattern alone:
// writes one product of x and the concatenated weights and a FusedAttention reading it packed,
// d0 and d1 as its (B, S) Reshape entries. They may be constants or dimensions of x or P read at
// run time; a Shape of P (an export's x.size()[:-1] + (N, D)) becomes the equal
// Concat(Slice(Shape(x), 0, -1), [N * D]). ONNX Runtime's saved form of a projection with a bias,
// [Reshape of] Gemm(Reshape(x, [-1 or M, K]), W, b) (static shapes), counts as MatMul(x, W) + b: the
// merged product then reads the Gemms' rows (HF Whisper as saved: 10 Gemms and 2 MatMuls, now 8 Gemms).
// Sequence entries a number and -1 (q's S, k's and v's -1 in a static export) keep the number.
std::optional<Patch> MergeQkvProjections(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
