// QDQ fusion, run at load before constant folding: groups of DequantizeLinear -> op ->
// QuantizeLinear with per-tensor (weights: per-channel) constant parameters become quantized ops,
// so int8 weights stay int8 in memory and the op runs on 8-bit data:
//  - DQ(x), DQ(w const) [, bias] -> Conv -> Q   becomes QLinearConv (bias quantized to int32 by
//    x_scale * w_scale);
//  - DQ(a), DQ(b) -> MatMul -> Q                becomes QLinearMatMul;
//  - DQ(a), DQ(b const) [, bias] -> Gemm -> Q    becomes com.microsoft QGemm (alpha and beta 1);
//  - DQ, DQ -> Add | Mul -> Q                   becomes com.microsoft QLinearAdd | QLinearMul;
//  - DQ... -> Concat -> Q                       becomes com.microsoft QLinearConcat;
//  - DQ -> GlobalAveragePool | AveragePool | Sigmoid | LeakyRelu -> Q  becomes the com.microsoft
//    QLinear op of that name;
//  - DQ -> MaxPool | Relu | Reshape | Transpose -> Q with the same scale and zero point on both
//    sides runs on the 8-bit values themselves (Relu as Max with the zero point): exact.
//  - Relu -> Q whose zero point is its type's least value: the Relu goes (Q clamps at zero
//    already), and Q fuses with the Relu's producer (Conv -> Relu -> Q is one QLinearConv).
//  - DQ -> Q left behind (ResNet's QLinearAdd -> Relu -> Q): com.onnxflow ByteLookup, the pair's
//    256 results as a table; DQ -> elementwise float ops of its value alone (HardSwish, x *
//    Sigmoid(x), Clip, ...) -> Q too, the table left for constant folding to compute; and per
//    channel of axis 1 ([C, 256]) where the ops differ by channel (DenseNet's DQ ->
//    BatchNormalization -> Relu -> Q); and 8-bit ops that compute a function of one 8-bit value
//    alone, the self-gated activations the group fusions leave (QLinearMul(x, QLinearSigmoid(x)):
//    YOLO's SiLU), one ByteLookup too. These rules are graph/qdq_lookup.h's.
// Anything else keeps its DQ and Q nodes, and constant folding turns a constant DQ into a float
// weight as before. DQ nodes that no fused node reads any more are dropped here, before folding.
#pragma once

#include <optional>

#include "graph/graph.h"
#include "graph/qdq_lookup.h"  // the lookup rules FuseQdq runs
#include "graph/rewrite.h"

namespace onnxflow::graph {

// Its rules (rewrite.h), in FuseQdq's order: a QuantizeLinear fuses with the op before it (and the
// DequantizeLinear nodes before that); then FuseRequantize and FuseElementwiseLookup
// (graph/qdq_lookup.h) make ByteLookups of what is left; then the DequantizeLinear nodes nothing
// reads go; then FuseByteCone (its cones' values must have no reader outside, an unread DQ too).
std::optional<Patch> FuseAtQuantize(Rewriter& r, NodeGraph::Id id);
std::optional<Patch> DropUnreadDequantize(Rewriter& r, NodeGraph::Id id);

Status FuseQdq(Graph* graph);

}  // namespace onnxflow::graph
