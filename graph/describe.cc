#include "graph/describe.h"

#include <map>
#include <set>
#include <string>

#include "ops/framework/registry.h"  // NormalizeDomain

namespace onnxflow::graph {

std::vector<NodeDescription> DescribeNodes(const onnx::GraphProto& graph) {
  std::vector<NodeDescription> nodes;
  nodes.reserve(graph.node_size());
  for (const auto& n : graph.node()) {
    NodeDescription d;
    d.name = n.name();
    d.op_type = n.op_type();
    d.domain = NormalizeDomain(n.domain());
    d.inputs.assign(n.input().begin(), n.input().end());
    d.outputs.assign(n.output().begin(), n.output().end());
    nodes.push_back(std::move(d));
  }
  return nodes;
}

// The load passes keep a fused node's outer edges: its inputs and outputs are values of the
// original graph, or derived from one by a suffix ("r1/blocked" is r1 in the blocked layout). So
// the ONNX nodes a node replaced are found without help from the passes: map its inputs and
// outputs to original values, then walk the original graph back from the outputs to the inputs,
// collecting the producers on the way (up to the values other optimized nodes produce). A node
// that is exactly an original one replaced nothing.
std::vector<NodeDescription> TraceOptimized(const onnx::GraphProto& original, const Graph& optimized) {
  std::map<std::string, int> producer;
  std::set<std::string> values;  // every value the original graph names
  for (const auto& in : original.input()) values.insert(in.name());
  for (const auto& init : original.initializer()) values.insert(init.name());
  for (int i = 0; i < original.node_size(); ++i) {
    for (const auto& out : original.node(i).output()) {
      if (out.empty()) continue;
      producer[out] = i;
      values.insert(out);
    }
  }
  // The original value a name stands for: itself, else the name with "/suffix" parts dropped.
  auto original_value = [&](std::string name) {
    while (!values.count(name)) {
      const size_t slash = name.rfind('/');
      if (slash == std::string::npos) return std::string();
      name.resize(slash);
    }
    return name;
  };
  // Which optimized nodes produce each original value: a walk stops at a value another node
  // produces (its producers are that node's), as where convolutions append to one Concat in turn.
  std::map<std::string, std::set<const Node*>> made_by;
  for (const Node& n : optimized.nodes) {
    for (const auto& out : n.proto->output()) made_by[original_value(out)].insert(&n);
  }
  std::vector<NodeDescription> result;
  for (const Node& n : optimized.nodes) {
    NodeDescription o;
    o.name = n.proto->name();
    o.op_type = n.op_type();
    o.domain = n.domain;
    o.inputs.assign(n.proto->input().begin(), n.proto->input().end());
    o.outputs.assign(n.proto->output().begin(), n.proto->output().end());
    std::set<std::string> stop;
    for (const auto& in : o.inputs) stop.insert(original_value(in));
    std::set<int> seen;
    std::vector<std::string> pending;
    std::set<std::string> own;
    for (const auto& out : o.outputs) own.insert(original_value(out));
    pending.assign(own.begin(), own.end());
    auto made_elsewhere = [&](const std::string& value) {
      auto m = made_by.find(value);
      return m != made_by.end() && !own.count(value) && (m->second.size() > 1 || !m->second.count(&n));
    };
    while (!pending.empty()) {
      const std::string value = pending.back();
      pending.pop_back();
      auto p = producer.find(value);
      if (p == producer.end() || stop.count(value) || made_elsewhere(value) || seen.count(p->second)) continue;
      seen.insert(p->second);
      for (const auto& in : original.node(p->second).input()) pending.push_back(in);
    }
    const bool as_written = seen.size() == 1 && original.node(*seen.begin()).op_type() == n.op_type() &&
                            original.node(*seen.begin()).name() == n.proto->name();
    if (!as_written) o.replaced.assign(seen.begin(), seen.end());
    result.push_back(std::move(o));
  }
  return result;
}

}  // namespace onnxflow::graph
