// What a model contains, before and after the load passes, for tools and hosts that show it
// (run_model --info): the main graph's nodes as written, and the graph the session runs with each
// fused node traced to the ONNX nodes it replaced.
#pragma once

#include <string>
#include <vector>

#include "include/onnxflow/session.h"
#include "include/onnxflow/status.h"

namespace onnxflow {

struct NodeDescription {
  std::string name;    // may be empty
  std::string op_type;
  std::string domain;  // "" for the default ONNX domain ("ai.onnx" is normalized to it)
  std::vector<std::string> inputs, outputs;  // value names; "" for an absent optional one
  // In ModelDescription::optimized: the ONNX nodes (indices into ModelDescription::nodes) this
  // node stands for when it is not one of them as written (a fusion, a layout change). Empty for
  // a node kept as written, and in ModelDescription::nodes.
  std::vector<int> replaced;
};

struct ModelDescription {
  ModelMetadata metadata;
  std::vector<ValueInfo> inputs, outputs;  // as Session::inputs() and outputs() list them
  int initializer_count = 0;               // the main graph's initializers
  std::vector<NodeDescription> nodes;      // the main graph as the file writes it
  // The nodes of the graphs inside its nodes (If branches, Loop and Scan bodies), at any depth:
  // a voice-activity model's LSTMs and convolutions can all sit inside one If.
  std::vector<NodeDescription> subgraph_nodes;
  // After the load passes (constant folding, fusions, blocked layouts), in execution order;
  // filled when DescribeModel is asked for it.
  std::vector<NodeDescription> optimized;
};

// Loads the model at `path` as Session::Load would (same errors) and describes it; with
// `optimized`, the graph after the load passes too.
Result<ModelDescription> DescribeModel(const std::string& path, const SessionOptions& options = {},
                                       bool optimized = false);

}  // namespace onnxflow
