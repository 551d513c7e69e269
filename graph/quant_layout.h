// The channels-last layout of a quantized region, run at load after the QDQ fusion and the
// float passes (as ONNX Runtime's NHWC transformer does for its QLinear ops): 2-D QLinearConv
// nodes with constant weights become com.onnxflow QLinearConvNhwc (ops/math/quant_conv.cc), and
// the 8-bit ops between them run on the channels-last values too:
//  - com.microsoft QLinearAdd / QLinearMul of two channels-last operands, Max of one and a scalar
//    (an 8-bit Relu), com.onnxflow ByteLookup: elementwise, the same op (a DequantizeLinear stays
//    plain: the Transpose before it then moves bytes, not floats);
//  - MaxPool on 8-bit values -> com.onnxflow MaxPoolNhwc (ops/quant_ms/qlinear_maxpool_nhwc.cc);
//  - com.microsoft QLinearGlobalAveragePool / QLinearAveragePool -> the same with channels_last;
//  - com.microsoft QLinearConcat over channels of channels-last inputs -> axis 3.
// A Transpose to channels-last goes before the region's first convolution reading a plain value,
// and one back where a plain reader (another op, a subgraph, a graph output) reads a region value.
// Outputs are unchanged.
#pragma once

#include "graph/graph.h"

namespace onnxflow::graph {

Status UseChannelsLastQuant(Graph* graph);

}  // namespace onnxflow::graph
