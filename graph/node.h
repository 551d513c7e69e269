// One node of the graph IR: the ONNX node as the passes last wrote it, its resolved domain and
// opset, and the subgraphs of its graph attributes, already built.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "proto/onnx.pb.h"

namespace onnxflow::graph {

struct Graph;

struct Node {
  std::shared_ptr<const onnx::NodeProto> proto;
  std::string domain;  // normalized
  int opset = 0;       // the model's version of `domain`
  std::vector<std::string> implicit_inputs;                 // outer-scope names the subgraphs read
  std::map<std::string, std::shared_ptr<Graph>> subgraphs;  // by attribute name

  const std::string& op_type() const { return proto->op_type(); }
  // "name (OpType)" or "OpType #index" for messages.
  std::string Describe() const;
};

}  // namespace onnxflow::graph
