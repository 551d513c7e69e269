#include "graph/outer_scope.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace onnxflow::graph {
namespace {

// What enclosing scopes hold, by name: constants, and graph inputs as declared.
struct Visible {
  std::map<std::string, const Tensor*> constants;
  std::map<std::string, const ValueInfo*> inputs;
};

// The values `g` defines itself: its inputs and what its nodes write (they hide enclosing names).
std::set<std::string> DefinedIn(const Graph& g) {
  std::set<std::string> names;
  for (const ValueInfo& in : g.inputs) names.insert(in.name);
  for (const Node& node : g.nodes) {
    for (const auto& out : node.proto->output()) names.insert(out);
  }
  return names;
}

// Gives the subgraphs of `g`'s nodes the constants they read from `visible` and `g` and the
// declarations of the enclosing inputs they read, and leaves on each node only the outer values
// its subgraphs still read.
void InheritInto(Graph* g, const Visible& visible) {
  Visible inner;  // what g's subgraphs see: the enclosing names g does not hide, and g's own
  const std::set<std::string> defined = DefinedIn(*g);
  for (const auto& [name, tensor] : visible.constants) {
    if (!defined.count(name) && !g->constants.count(name)) inner.constants.emplace(name, tensor);
  }
  for (const auto& [name, info] : visible.inputs) {
    if (!defined.count(name) && !g->constants.count(name)) inner.inputs.emplace(name, info);
  }
  for (const auto& [name, tensor] : g->constants) {
    if (!IsGraphInput(*g, name)) inner.constants.emplace(name, &tensor);
  }
  for (const ValueInfo& in : g->inputs) {
    if (!g->constants.count(in.name)) inner.inputs.emplace(in.name, &in);
  }
  for (const auto& [name, info] : g->outer_inputs) inner.inputs.emplace(name, &info);
  std::vector<NodeGraph::Id> holders;
  for (NodeGraph::Id id : g->nodes.Order()) {
    if (!g->nodes[id].subgraphs.empty()) holders.push_back(id);
  }
  for (NodeGraph::Id id : holders) {
    std::set<std::string> still_outer;
    for (const auto& [attribute, sub] : g->nodes[id].subgraphs) {
      for (auto it = sub->outer_names.begin(); it != sub->outer_names.end();) {
        if (auto input = inner.inputs.find(*it); input != inner.inputs.end()) {
          sub->outer_inputs.emplace(*it, *input->second);
        }
        auto found = inner.constants.find(*it);
        if (found == inner.constants.end() || sub->constants.count(*it)) {
          ++it;
          continue;
        }
        sub->constants.emplace(*it, *found->second);  // shares the storage
        sub->known_types[*it] = found->second->dtype();
        it = sub->outer_names.erase(it);
      }
      InheritInto(sub.get(), inner);
      still_outer.insert(sub->outer_names.begin(), sub->outer_names.end());
    }
    const std::vector<std::string>& implicit = g->nodes[id].implicit_inputs;
    std::vector<std::string> kept;
    for (const auto& name : implicit) {
      if (still_outer.count(name)) kept.push_back(name);
    }
    if (kept.size() != implicit.size()) g->nodes.SetImplicitInputs(id, std::move(kept));
  }
}

}  // namespace

void InheritOuterScope(Graph* graph) { InheritInto(graph, {}); }

}  // namespace onnxflow::graph
