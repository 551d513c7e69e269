// The graph the load passes made, traced back to the model as written (DescribeModel,
// include/onnxflow/describe.h).
#pragma once

#include <vector>

#include "graph/graph.h"
#include "include/onnxflow/describe.h"
#include "proto/onnx.pb.h"

namespace onnxflow::graph {

// The nodes of `graph` as written.
std::vector<NodeDescription> DescribeNodes(const onnx::GraphProto& graph);

// The nodes of `optimized`, each with the nodes of `original` it replaced (NodeDescription::replaced).
std::vector<NodeDescription> TraceOptimized(const onnx::GraphProto& original, const Graph& optimized);

}  // namespace onnxflow::graph
