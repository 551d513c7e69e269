// The channels-last layout of a quantized region, run at load after the QDQ fusion and the
// float passes (as ONNX Runtime's NHWC transformer does for its QLinear ops): 2-D QLinearConv
// nodes with constant weights become com.onnxflow QLinearConvNhwc (ops/math/quant_conv.cc), and
// the 8-bit ops between them run on the channels-last values too:
//  - com.microsoft QLinearAdd / QLinearMul of two channels-last operands, Max of one and a scalar
//    (an 8-bit Relu), com.onnxflow ByteLookup: elementwise, the same op (a DequantizeLinear stays
//    plain: the Transpose before it then moves bytes, not floats);
//  - an elementwise op above (or a pointwise float op, a QLinearConcat) with one operand in the
//    region and another from outside that is proven 4-D (graph/value_rank.h): the outside operand
//    enters through one Transpose that all its region readers share (a residual's shortcut), where
//    a region op reads the result; and a one-operand op of those whose only readers are region
//    ops takes the entry's Transpose above it (a DequantizeLinear then moves bytes, not floats);
//  - MaxPool on 8-bit values -> com.onnxflow MaxPoolNhwc (ops/quant_ms/qlinear_maxpool_nhwc.cc);
//  - Pad by constant pads (any mode) -> the same pads in channels-last order;
//  - com.microsoft QLinearGlobalAveragePool / QLinearAveragePool -> the same with channels_last;
//  - com.microsoft QLinearConcat over channels of channels-last inputs -> axis 3;
//  - Split over channels -> axis 3, each output in the region (a C2f block's halves);
//  - nearest Resize by constant scales or sizes -> the same in channels-last order (an FPN's
//    upsampling).
// A Transpose to channels-last goes before the region's first reader of a plain value (a
// convolution's input, an entering operand), and one back where a plain reader (another op, a
// subgraph, a graph output) reads a region value.
// Outputs are unchanged.
#pragma once

#include "graph/graph.h"

namespace onnxflow::graph {

Status UseChannelsLastQuant(Graph* graph);

}  // namespace onnxflow::graph
