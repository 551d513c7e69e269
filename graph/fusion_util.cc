#include "graph/fusion_util.h"

#include <algorithm>

namespace onnxflow::graph {

Uses CountUses(const Graph& g) {
  Uses u;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (const auto& in : n.proto->input()) ++u.readers[in];
    for (const auto& in : n.implicit_inputs) ++u.readers[in];
    for (const auto& out : n.proto->output()) u.producer[out] = static_cast<int>(i);
  }
  for (const auto& out : g.outputs) u.readers[out.name] += 2;  // never fuse a graph output away
  return u;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

const Tensor* FloatConstant(const Graph& g, const onnx::NodeProto& n, int input) {
  if (input >= n.input_size() || n.input(input).empty()) return nullptr;
  auto it = g.constants.find(n.input(input));
  return it != g.constants.end() && it->second.dtype() == DataType::kFloat ? &it->second : nullptr;
}

DataType KnownType(const Graph& g, const std::string& name) {
  if (auto c = g.constants.find(name); c != g.constants.end()) return c->second.dtype();
  auto t = g.known_types.find(name);
  return t != g.known_types.end() ? t->second : DataType::kUndefined;
}

bool IsOp(const Node& n, const char* op) { return n.domain.empty() && n.op_type() == op; }

int SoleProducer(const Graph& g, const Uses& u, const Node& n) {
  if (n.proto->input_size() == 0) return -1;
  const std::string& x = n.proto->input(0);
  auto p = u.producer.find(x);
  auto r = u.readers.find(x);
  if (p == u.producer.end() || r == u.readers.end() || r->second != 1) return -1;
  return p->second;
}

bool IsFloatProduct(const Graph& g, const Node& producer) {
  DataType type = DataType::kUndefined;
  for (int k = 0; k < std::min(2, producer.proto->input_size()) && type == DataType::kUndefined; ++k) {
    type = KnownType(g, producer.proto->input(k));
  }
  return type == DataType::kFloat;
}

void Apply(Graph* g, FusionRule rule) {
  std::vector<bool> removed(g->nodes.size(), false);
  bool any = false;
  Uses u = CountUses(*g);
  for (size_t i = 0; i < g->nodes.size(); ++i) any |= rule(g, u, i, &removed);
  if (!any) return;
  std::vector<Node> kept;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (!removed[i]) kept.push_back(std::move(g->nodes[i]));
  }
  g->nodes = std::move(kept);
}

}  // namespace onnxflow::graph
