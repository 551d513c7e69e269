// Model-local functions (ModelProto.functions): a node that calls one is replaced by the
// function's body, with the caller's values and attributes (ref_attr_name) bound, unless the
// registry has a dedicated kernel for the op, which wins.
#pragma once

#include "graph/graph.h"
#include "ops/framework/registry.h"
#include "proto/onnx.pb.h"

namespace onnxflow::graph {

// Rewrites `model` in place (main graph and every subgraph); adds the functions' opset imports to
// `opsets` where the model lacks them.
Status InlineFunctions(onnx::ModelProto* model, OpsetMap* opsets, const KernelRegistry& registry);

}  // namespace onnxflow::graph
