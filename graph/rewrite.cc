#include "graph/rewrite.h"

#include <algorithm>
#include <unordered_set>

namespace onnxflow::graph {

std::string Rewriter::FreshName(const std::string& base) {
  if (!names_) names_.emplace(*g_);
  return names_->Fresh(base);
}

namespace {

Status Check(const Graph& g, const Patch& patch, const char* rule) {
  const NodeGraph& nodes = g.nodes;
  auto bug = [&](const std::string& what) { return Internal(std::string("load pass '") + rule + "': " + what); };
  std::unordered_set<NodeGraph::Id> replaced;
  for (NodeGraph::Id id : patch.replaced) {
    if (!nodes.IsLive(id) || !replaced.insert(id).second) return bug("replaces a node twice or one already gone");
  }
  std::unordered_set<std::string> written, constants;
  for (const auto& [name, tensor] : patch.constants) {
    const NodeGraph::Id p = nodes.Producer(name);
    if (g.constants.count(name) || (p != NodeGraph::None() && !replaced.count(p)) || !constants.insert(name).second) {
      return bug("adds constant '" + name + "', a name in use");
    }
    written.insert(name);
  }
  for (const Node& n : patch.added) {
    for (const auto& out : n.proto->output()) {
      if (out.empty()) continue;
      const NodeGraph::Id p = nodes.Producer(out);
      if (!written.insert(out).second || (p != NodeGraph::None() && !replaced.count(p)) || g.constants.count(out) ||
          constants.count(out)) {
        return bug(n.Describe() + " writes '" + out + "', which another node writes");
      }
    }
  }
  for (const Node& n : patch.added) {
    auto defined = [&](const std::string& v) {
      const NodeGraph::Id p = nodes.Producer(v);
      return written.count(v) || g.constants.count(v) || IsGraphInput(g, v) ||
             g.outer_names.count(v) || (p != NodeGraph::None() && !replaced.count(p));
    };
    for (const auto& in : n.proto->input()) {
      if (!in.empty() && !defined(in)) return bug(n.Describe() + " reads '" + in + "', which nothing defines");
    }
    for (const auto& in : n.implicit_inputs) {
      if (!defined(in)) return bug(n.Describe() + " reads '" + in + "', which nothing defines");
    }
  }
  for (const auto& [name, type] : patch.types) {
    auto known = g.known_types.find(name);
    if (known != g.known_types.end() && known->second != type) {
      return bug("gives '" + name + "' type " + DataTypeName(type) + ", which the load knew as " +
                 DataTypeName(known->second));
    }
  }
  if (patch.at.size() > patch.added.size()) return bug("places more nodes than it adds");
  for (NodeGraph::Id id : patch.at) {
    if (id != NodeGraph::None() && !nodes.IsLive(id)) return bug("places a node at one already gone");
  }
  // What the replaced nodes wrote and someone else still reads must be written again.
  for (NodeGraph::Id id : patch.replaced) {
    for (const auto& out : nodes[id].proto->output()) {
      if (out.empty() || written.count(out)) continue;
      if (nodes.IsOutput(out)) return bug("drops '" + out + "', a graph output");
      for (NodeGraph::Id reader : nodes.Readers(out)) {
        if (!replaced.count(reader)) return bug("drops '" + out + "', which " + nodes[reader].Describe() + " reads");
      }
    }
  }
  return Status::Ok();
}

// The nodes of the file a one-node patch replaced, in their order, for the new node's messages
// (a patch of several nodes does not say which replaced which). Nodes that were fusions already
// pass on what they were fused from; a node a rule built from one of them (WithProto) starts over.
void RecordFusion(const NodeGraph& nodes, const std::vector<NodeGraph::Id>& replaced, Node* fused) {
  constexpr size_t kNamed = 4;  // a 100,000-node chain is named by its first few
  if (replaced.empty()) return;
  if (replaced.size() == 1 && nodes[replaced[0]].fused_count == 0 && nodes[replaced[0]].Label() == fused->Label()) {
    return;  // the node rewritten in place, not a fusion
  }
  std::vector<NodeGraph::Id> ordered = replaced;
  std::sort(ordered.begin(), ordered.end(),
            [&](NodeGraph::Id a, NodeGraph::Id b) { return nodes.KeyOf(a) < nodes.KeyOf(b); });
  fused->fused_from.clear();
  fused->fused_count = 0;
  for (NodeGraph::Id id : ordered) {
    const Node& n = nodes[id];
    const std::vector<std::string> own{n.Label()};
    const std::vector<std::string>& origins = n.fused_count > 0 ? n.fused_from : own;
    fused->fused_count += n.fused_count > 0 ? n.fused_count : 1;
    for (const std::string& origin : origins) {
      if (fused->fused_from.size() < kNamed) fused->fused_from.push_back(origin);
    }
  }
}

}  // namespace

Status ApplyPatch(Graph* g, Patch patch, const char* rule) {
  ONNXFLOW_RETURN_IF_ERROR(Check(*g, patch, rule));
  NodeGraph& nodes = g->nodes;
  if (patch.added.size() == 1) RecordFusion(nodes, patch.replaced, &patch.added[0]);
  NodeGraph::Key first = nodes.AppendKey();
  for (NodeGraph::Id id : patch.replaced) first = std::min(first, nodes.KeyOf(id));
  std::vector<NodeGraph::Key> keys;
  for (size_t k = 0; k < patch.added.size(); ++k) {
    const bool placed = k < patch.at.size() && patch.at[k] != NodeGraph::None();
    keys.push_back(placed ? nodes.KeyOf(patch.at[k]) : first);
  }
  // Constants only the replaced nodes read go with them: a pass that writes new weights (merged,
  // folded) would otherwise hold both until RemoveDeadNodes, every layer's at once at the peak.
  std::vector<std::string> inputs;
  for (NodeGraph::Id id : patch.replaced) {
    for (const std::string& in : nodes[id].proto->input()) inputs.push_back(in);
  }
  for (NodeGraph::Id id : patch.replaced) nodes.Remove(id);
  for (auto& [name, tensor] : patch.constants) {
    g->known_types[name] = tensor.dtype();
    g->constants.emplace(std::move(name), std::move(tensor));
  }
  for (const auto& [name, type] : patch.types) g->known_types[name] = type;
  for (size_t k = 0; k < patch.added.size(); ++k) nodes.Add(std::move(patch.added[k]), nodes.KeyAt(keys[k]));
  for (const std::string& in : inputs) {
    if (!in.empty() && nodes.ReadCount(in) == 0 && !IsGraphInput(*g, in)) g->constants.erase(in);
  }
  return Status::Ok();
}

Status RunRule(Graph* g, const char* name, const Rule& rule) {
  Rewriter rewriter(g);
  const std::vector<NodeGraph::Id> walk = g->nodes.Order();
  for (NodeGraph::Id id : walk) {
    if (!g->nodes.IsLive(id)) continue;
    if (std::optional<Patch> patch = rule(rewriter, id)) ONNXFLOW_RETURN_IF_ERROR(ApplyPatch(g, std::move(*patch), name));
  }
  g->nodes.Compact();
  return CheckAcyclic(*g, name);
}

Status CheckAcyclic(const Graph& g, const char* rule) {
  if (const auto cycle = g.nodes.Cycle(1); !cycle.empty()) {
    return Internal(std::string("load pass '") + rule + "' closed a cycle through " + g.nodes[cycle[0]].Describe());
  }
  return Status::Ok();
}

Status RunRuleEverywhere(Graph* g, const char* name, const Rule& rule) {
  ONNXFLOW_RETURN_IF_ERROR(RunRule(g, name, rule));
  for (const Node& n : g->nodes) {
    for (const auto& [attribute, sub] : n.subgraphs) ONNXFLOW_RETURN_IF_ERROR(RunRuleEverywhere(sub.get(), name, rule));
  }
  return Status::Ok();
}

}  // namespace onnxflow::graph
