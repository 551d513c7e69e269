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
  // A node a fusion wrote in place of others: the first few of the ONNX nodes it replaced, as
  // Describe() named them, and how many it replaced in all. Messages name them, so an error in a
  // fused node still points at the nodes of the file.
  std::vector<std::string> fused_from;
  size_t fused_count = 0;

  const std::string& op_type() const { return proto->op_type(); }
  // "node 'name' (OpType)" or "OpType node" for messages, and what it was fused from.
  std::string Describe() const;
  // The same without the fusion's origin.
  std::string Label() const;
};

}  // namespace onnxflow::graph
