#include "graph/scope_names.h"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace onnxflow::graph {
namespace {

using Renames = std::map<std::string, std::string>;

template <class Fn>
void ForEachSubgraph(onnx::GraphProto* g, Fn&& fn) {
  for (onnx::NodeProto& node : *g->mutable_node()) {
    for (onnx::AttributeProto& attr : *node.mutable_attribute()) {
      if (attr.has_g()) fn(attr.mutable_g());
      for (onnx::GraphProto& sub : *attr.mutable_graphs()) fn(&sub);
    }
  }
}

// Every name the model uses, at any depth: the new names avoid them all.
void CollectNames(onnx::GraphProto* g, std::set<std::string>* names) {
  for (const auto& t : g->initializer()) names->insert(t.name());
  for (const auto& t : g->sparse_initializer()) names->insert(t.values().name());
  for (const auto& v : g->input()) names->insert(v.name());
  for (const auto& v : g->output()) names->insert(v.name());
  for (const auto& n : g->node()) {
    names->insert(n.input().begin(), n.input().end());
    names->insert(n.output().begin(), n.output().end());
  }
  ForEachSubgraph(g, [&](onnx::GraphProto* sub) { CollectNames(sub, names); });
}

// The names `g` itself defines.
std::vector<std::string> Defined(const onnx::GraphProto& g) {
  std::vector<std::string> names;
  for (const auto& t : g.initializer()) names.push_back(t.name());
  for (const auto& t : g.sparse_initializer()) names.push_back(t.values().name());
  for (const auto& v : g.input()) names.push_back(v.name());
  for (const auto& n : g.node()) names.insert(names.end(), n.output().begin(), n.output().end());
  return names;
}

class Renamer {
 public:
  explicit Renamer(onnx::GraphProto* main) { CollectNames(main, &used_); }

  // `visible`: the names the enclosing graphs define (as renamed); `renames`: the enclosing names
  // renamed so far, which reads here follow unless this graph defines the name itself.
  void Visit(onnx::GraphProto* g, const std::set<std::string>& visible, Renames renames) {
    const std::vector<std::string> defined = Defined(*g);
    for (const std::string& name : defined) renames.erase(name);
    for (const std::string& name : defined) {
      if (!name.empty() && visible.count(name) && !renames.count(name)) renames[name] = Fresh(name);
    }
    if (!renames.empty()) Apply(renames, g);
    std::set<std::string> inner = visible;
    for (const std::string& name : defined) inner.insert(Renamed(renames, name));
    ForEachSubgraph(g, [&](onnx::GraphProto* sub) { Visit(sub, inner, renames); });
  }

 private:
  static const std::string& Renamed(const Renames& renames, const std::string& name) {
    auto it = renames.find(name);
    return it != renames.end() ? it->second : name;
  }

  static void Rename(const Renames& renames, std::string* name) { *name = Renamed(renames, *name); }

  // Every name in `g` itself (its subgraphs are visited on their own).
  static void Apply(const Renames& renames, onnx::GraphProto* g) {
    for (auto& t : *g->mutable_initializer()) Rename(renames, t.mutable_name());
    for (auto& t : *g->mutable_sparse_initializer()) Rename(renames, t.mutable_values()->mutable_name());
    for (auto* list : {g->mutable_input(), g->mutable_output(), g->mutable_value_info()}) {
      for (auto& v : *list) Rename(renames, v.mutable_name());
    }
    for (auto& n : *g->mutable_node()) {
      for (auto& in : *n.mutable_input()) Rename(renames, &in);
      for (auto& out : *n.mutable_output()) Rename(renames, &out);
    }
  }

  std::string Fresh(const std::string& name) {
    for (int i = 1;; ++i) {
      std::string candidate = name + "__inner" + std::to_string(i);
      if (used_.insert(candidate).second) return candidate;
    }
  }

  std::set<std::string> used_;
};

bool HasSubgraphs(onnx::GraphProto* g) {
  bool any = false;
  ForEachSubgraph(g, [&](onnx::GraphProto*) { any = true; });
  return any;
}

}  // namespace

void RenameShadowedNames(onnx::GraphProto* main) {
  if (!HasSubgraphs(main)) return;
  Renamer renamer(main);
  const std::vector<std::string> defined = Defined(*main);
  const std::set<std::string> visible(defined.begin(), defined.end());
  ForEachSubgraph(main, [&](onnx::GraphProto* sub) { renamer.Visit(sub, visible, {}); });
}

}  // namespace onnxflow::graph
