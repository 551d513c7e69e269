// 1-D convolutions as 2-D ones of height 1, run at load right before the layout passes.
//
// The fast convolution paths take rank-4 weights only: float Conv / FusedConv become BlockedConv
// (graph/blocked_layout.cc) and QLinearConv the channels-last integer kernel
// (graph/quant_layout.cc). Audio and speech models are 1-D convolution networks (wav2vec2's
// feature encoder, Whisper's front end, an STFT written as a Conv, Conformer's depthwise
// convolution), which otherwise run on the plain kernels. This pass rewrites each 1-D Conv,
// FusedConv, QLinearConv and ConvInteger whose weights are a constant [M, C/g, k] as the same op on
// [N, C, 1, L]: weights [M, C/g, 1, k] (the same bytes), kernel_shape [1, k], strides [1, s],
// dilations [1, d], pads [0, b, 0, e], auto_pad kept (a height of 1 pads nothing). The ops between
// such convolutions that do not care about the extra axis (elementwise ops and activations, per-
// tensor (de)quantization, BatchNormalization, InstanceNormalization, Split and Concat over
// channels) run on the 4-D values too, their constant operands given the 4-D broadcast shape, so
// a chain of convolutions stays one region for the layout passes; Unsqueeze (axis 2) enters the
// region and Squeeze leaves it where a plain reader needs the 3-D value.
//
// A convolution is lifted only when it would run as written: attributes of the 1-D form, and an
// input known to be of rank 3 (a lifted value, a declared graph input, or what the ops in front
// of it make of one), so a model that is malformed for the 1-D op is refused by the plain kernel
// with the same message as before. Weights computed at run time stay 1-D.
#pragma once

#include "graph/graph.h"

namespace onnxflow::graph {

// Rewrites `graph` and its subgraphs as above; Ok and unchanged when it holds no 1-D convolution.
Status LiftConv1dTo2d(Graph* graph);

}  // namespace onnxflow::graph
