// com.onnxflow BlockedResize and BlockedShape: the two ops a U-Net's or a detector's upsampling
// path needs to stay channel-blocked (graph/blocked_layout.cc makes them).
//
// BlockedResize(X blocked [N, C/16, H, W, 16], scales?, sizes?): Resize of the spatial axes only,
// nearest or linear, with Resize's attributes `mode`, `coordinate_transformation_mode` and
// `nearest_mode`; `scales` and `sizes` are Resize's 4-value inputs for the plain [N, C, H, W]
// (the first two must keep N and C; attribute `channels` is C). The output is what Resize computes,
// in the blocked layout and bit for bit: linear uses ONNX Runtime's bilinear arithmetic
// (ops/image/resize_bilinear.h) as the plain kernel does. X is float or float16 and Y has its type:
// nearest copies float16 as it is, linear computes in float on the widened values and rounds each
// output to nearest even once.
//
// BlockedShape(X blocked): Shape of the plain tensor, [N, channels, H, W], with Shape-15's `start`
// and `end`. Without it, a Resize to another value's size read that value's Shape, and the whole
// tensor was reordered back to the plain layout to be measured.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterBlockedResize(KernelRegistry& registry);

}  // namespace onnxflow
