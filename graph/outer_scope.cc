#include "graph/outer_scope.h"

#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "graph/fusion_util.h"

namespace onnxflow::graph {
namespace {

// Casts followed back to a declared input: a half model has one or two (rounded, widened); a
// hostile chain of many, read by many subgraphs, must not cost their product.
constexpr int kMaxCasts = 4;

// The chain of enclosing graphs, innermost first. A name resolves in the innermost scope that has
// it (a subgraph's reuse of an enclosing name is renamed apart at load, graph/scope_names.h, so
// there is no shadowing to mind). Looked up per name read, never copied per scope, and each graph's inputs indexed once: a
// hostile file of many subgraphs, constants or inputs costs what its subgraphs read, not a
// product of the two.
struct Enclosing {
  const Graph* graph;
  const Enclosing* parent;
  std::unordered_map<std::string, const ValueInfo*> inputs;  // graph's inputs by name

  Enclosing(const Graph* g, const Enclosing* outside) : graph(g), parent(outside) {
    for (const ValueInfo& in : g->inputs) inputs.emplace(in.name, &in);
  }

  // The constant `name` resolves to, unless it is a graph input there (an initializer the caller
  // may override); null when it is no constant.
  const Tensor* Constant(const std::string& name) const {
    for (const Enclosing* e = this; e != nullptr; e = e->parent) {
      auto c = e->graph->constants.find(name);
      if (c != e->graph->constants.end()) return e->inputs.count(name) ? nullptr : &c->second;
    }
    return nullptr;
  }
  // The declaration of graph input `name` of an enclosing graph (or one it knew as outer), or of
  // a Cast of one there (same shape, the Cast's type): a float16 decoder's caches reach its
  // branches as Casts made in the main graph (keep-float inputs rounded to half, then widened to
  // float by ComputeHalfInFloat).
  std::optional<ValueInfo> Input(const std::string& read) const {
    std::string name = read;
    std::optional<DataType> cast_to;  // the last Cast's type, the one read
    int casts = 0;
    for (const Enclosing* e = this; e != nullptr; e = e->parent) {
      for (NodeGraph::Id cast = e->graph->nodes.Producer(name); cast != NodeGraph::None();
           cast = e->graph->nodes.Producer(name)) {
        const Node& n = e->graph->nodes[cast];
        if (!IsOp(n, "Cast") || n.proto->input_size() != 1 || ++casts > kMaxCasts) return std::nullopt;
        const onnx::AttributeProto* to = Attr(*n.proto, "to");
        if (!cast_to && to != nullptr && to->type() == onnx::AttributeProto::INT) cast_to = static_cast<DataType>(to->i());
        name = n.proto->input(0);
      }
      if (e->graph->constants.count(name)) return std::nullopt;
      const ValueInfo* found = nullptr;
      if (auto in = e->inputs.find(name); in != e->inputs.end()) found = in->second;
      if (auto outer = e->graph->outer_inputs.find(name); !found && outer != e->graph->outer_inputs.end()) {
        found = &outer->second;
      }
      if (found == nullptr) continue;
      ValueInfo info = *found;
      info.name = read;
      if (cast_to) info.dtype = *cast_to;
      return info;
    }
    return std::nullopt;
  }
};

// Gives the subgraphs of `g`'s nodes the enclosing constants they read and the declarations of the
// enclosing inputs they read, and leaves on each node only the outer values its subgraphs still
// read. Returns how many constants it handed down.
int64_t InheritInto(Graph* g, const Enclosing* outside) {
  std::vector<NodeGraph::Id> holders;
  for (NodeGraph::Id id : g->nodes.Order()) {
    if (!g->nodes[id].subgraphs.empty()) holders.push_back(id);
  }
  if (holders.empty()) return 0;
  int64_t inherited = 0;
  const Enclosing here(g, outside);
  for (NodeGraph::Id id : holders) {
    std::set<std::string> still_outer;
    for (const auto& [attribute, sub] : g->nodes[id].subgraphs) {
      for (auto it = sub->outer_names.begin(); it != sub->outer_names.end();) {
        if (std::optional<ValueInfo> input = here.Input(*it)) sub->outer_inputs.emplace(*it, std::move(*input));
        const Tensor* constant = here.Constant(*it);
        if (constant == nullptr || sub->constants.count(*it)) {
          ++it;
          continue;
        }
        sub->constants.emplace(*it, *constant);  // shares the storage
        sub->known_types[*it] = constant->dtype();
        it = sub->outer_names.erase(it);
        ++inherited;
      }
      inherited += InheritInto(sub.get(), &here);
      still_outer.insert(sub->outer_names.begin(), sub->outer_names.end());
    }
    const std::vector<std::string>& implicit = g->nodes[id].implicit_inputs;
    std::vector<std::string> kept;
    for (const auto& name : implicit) {
      if (still_outer.count(name)) kept.push_back(name);
    }
    if (kept.size() != implicit.size()) g->nodes.SetImplicitInputs(id, std::move(kept));
  }
  return inherited;
}

}  // namespace

int64_t InheritOuterScope(Graph* graph) { return InheritInto(graph, nullptr); }

}  // namespace onnxflow::graph
