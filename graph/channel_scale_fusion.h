// A squeeze-and-excitation block ends in Mul(map, gate), the gate one factor per image and channel
// ([N, C, 1, 1], from a global pool through 1x1 convolutions and activations); a 1x1 convolution
// then reads the product. After the blocked layout, the BlockedConv reads the map itself and the
// gate as X_SCALE (ops/blocked/blocked_conv.cc), which it folds into its weights per image:
// conv(X * s, W) = conv(X, W * s). The Mul's pass over the map, and its output, are gone
// (EfficientNet-B0, MobileNetV3, RegNetY).
#pragma once

#include <optional>

#include "graph/rewrite.h"

namespace onnxflow::graph {

// At a BlockedConv: takes the Mul it alone reads (rewrite.h's rule).
std::optional<Patch> FuseChannelScaleIntoConv(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
