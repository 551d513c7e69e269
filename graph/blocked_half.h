// Float16 storage for a float16 model's blocked activations (issue 21), run after the blocked
// layout pass (blocked_layout.h).
//
// A float16 model computes in float (half_compute.h), and its activations were stored in float
// too: twice the bytes the model declares, and at high resolution the activations are most of the
// run's memory (ISNet at 1024 x 1024: 410 MB of blocked maps at the peak, against 88 MB of
// weights). This pass stores a blocked value in float16 where the model declares it float16
// (Graph::declared_half), the node that writes it can write float16 and every node that reads it
// can read float16; the kernels widen in registers or in per-task scratch and compute in float as
// before, so only the rounding of the stored values to the model's own type changes.
//
// Values tied by a node (the inputs and outputs of a channel Concat or Split, X and Y of a pool or
// Resize, a BlockedConv's Y with its residual Z and its INTO) have one type: they go to float16
// together or not at all.
#pragma once

#include "graph/graph.h"

namespace onnxflow::graph {

Status StoreBlockedValuesInHalf(Graph* graph);

}  // namespace onnxflow::graph
