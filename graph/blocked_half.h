// Float16 storage for a float16 model's blocked activations and the plain values moved out of them
// (issue 21), run after the blocked layout pass (blocked_layout.h).
//
// A float16 model computes in float (half_compute.h), and its activations were stored in float
// too: twice the bytes the model declares, and at high resolution the activations are most of the
// run's memory (ISNet at 1024 x 1024: 410 MB of blocked maps at the peak, against 88 MB of
// weights). This pass stores a blocked value in float16 where the model declares it float16
// (Graph::declared_half), the node that writes it can write float16 (a BlockedConv or
// BlockedDepthwiseConv by its output_type, an op whose Y has X's type) and every node that reads
// it can read float16; the kernels widen in registers or in per-task scratch and compute in float
// as before, so only the rounding of the stored values to the model's own type changes.
//
// Values tied by a node (the inputs and outputs of a channel Concat or Split, X and Y of a pool,
// Resize or BatchNormalization, a BlockedConv's Y with its residual Z and its INTO, X and Y of a
// Reshape or Transpose) have one type: they go to float16 together or not at all. The plain
// values FromBlocked writes go too, with the ops that only move them (a detector's head: Reshape, Concat, Split, Transpose;
// YOLOv8n float16's peak was there, 16.5 MB of float tensors), and an op that takes float only
// reads a float copy, a Cast after the value's producer: a class goes to float16 only where its
// values that hold storage of their own outnumber the copies its readers need.
#pragma once

#include "graph/graph.h"

namespace onnxflow::graph {

// `onnx_opset`: the model's default-domain opset, the Casts' (a read by an op that takes float
// only reads a float copy, made after the value's producer, where that pays).
Status StoreBlockedValuesInHalf(Graph* graph, int onnx_opset);

}  // namespace onnxflow::graph
