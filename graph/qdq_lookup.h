// The QDQ rules that end in a com.onnxflow ByteLookup (ops/quant_ms/qlinear_lookup.cc): a Q whose
// 8-bit output is a function of one DQ's 8-bit input, code by code, becomes a table of the 256
// results, one byte read per element instead of float ops between a DQ and a Q. FuseQdq
// (graph/qdq_fusion.h) runs them after FuseAtQuantize, on what its group fusions leave:
//  - DQ -> Q (ResNet's QLinearAdd -> Relu -> Q once the Relu went): the table computed here as the
//    pair's kernels compute it, or an Identity when it maps every code to itself;
//  - DQ -> elementwise float ops of the DQ's value alone (HardSwish, x * Sigmoid(x), Clip, Mul by a
//    constant, ...) -> Q: the table is those ops over a constant of the 256 codes, left for
//    constant folding to compute with the kernels that would have run;
//  - per channel of axis 1: the same when the function differs by channel (a constant
//    BatchNormalization, a Mul / Add by a [C, 1, 1] constant, a DQ or Q per channel of axis 1):
//    a [C, 256] table (DenseNet's 62 DQ -> BatchNormalization -> Relu -> Q, the BatchNormalization
//    as ONNX Runtime computes it, so the bytes are its bytes), and x * s + b rows for
//    ops/quant_ms/channel_affine.h when the chain is one such step and at most a Relu or Clip
//    (the kernel uses them only where they give every byte of the table).
#pragma once

#include <optional>

#include "graph/graph.h"
#include "graph/rewrite.h"

namespace onnxflow::graph {

// DQ -> Q (per tensor, 8-bit, the DQ's only reader the Q): a 256-entry ByteLookup of the pair.
std::optional<Patch> FuseRequantize(Rewriter& r, NodeGraph::Id id);
// DQ -> elementwise float ops computing a function of the DQ's value alone -> Q: a ByteLookup
// whose table is those ops over the 256 codes (per tensor), or over [C, 256] codes per channel of
// axis 1, left for constant folding to compute.
std::optional<Patch> FuseElementwiseLookup(Rewriter& r, NodeGraph::Id id);
// 8-bit ops (QLinearSigmoid, QLinearLeakyRelu, QLinearMul, QLinearAdd, a per-tensor ByteLookup)
// that together compute a function of one 8-bit value alone: a self-gated activation as the
// group fusions leave it, x * Sigmoid(x) as QLinearMul(x, QLinearSigmoid(x)) (YOLO's SiLU; a
// HardSwish likewise). One ByteLookup of x whose table is those ops over the 256 codes.
std::optional<Patch> FuseByteCone(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
