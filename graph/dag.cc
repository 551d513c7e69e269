#include "graph/dag.h"

#include <functional>
#include <queue>
#include <unordered_map>

namespace onnxflow::graph {

Dag BuildDag(const std::vector<std::vector<std::string>>& node_inputs,
             const std::vector<std::vector<std::string>>& node_outputs) {
  Dag dag(node_inputs.size());
  std::unordered_map<std::string, int> producer;
  for (size_t i = 0; i < node_outputs.size(); ++i) {
    for (const std::string& name : node_outputs[i]) {
      if (!name.empty()) producer[name] = static_cast<int>(i);
    }
  }
  for (size_t i = 0; i < node_inputs.size(); ++i) {
    for (const std::string& name : node_inputs[i]) {
      auto it = producer.find(name);
      if (it != producer.end()) boost::add_edge(it->second, i, dag);  // setS: no parallel edges
    }
  }
  return dag;
}

bool TopologicalOrder(const Dag& dag, std::vector<int>* order, std::vector<int>* cycle) {
  const size_t n = boost::num_vertices(dag);
  std::vector<size_t> pending(n);
  // Smallest index first, so a file that is already in topological order keeps its order.
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (size_t v = 0; v < n; ++v) {
    pending[v] = boost::in_degree(v, dag);
    if (pending[v] == 0) ready.push(static_cast<int>(v));
  }
  order->clear();
  while (!ready.empty()) {
    const int v = ready.top();
    ready.pop();
    order->push_back(v);
    for (auto [e, end] = boost::out_edges(v, dag); e != end; ++e) {
      const size_t w = boost::target(*e, dag);
      if (--pending[w] == 0) ready.push(static_cast<int>(w));
    }
  }
  if (order->size() == n) return true;
  cycle->clear();
  for (size_t v = 0; v < n; ++v) {
    if (pending[v] > 0) cycle->push_back(static_cast<int>(v));
  }
  return false;
}

}  // namespace onnxflow::graph
