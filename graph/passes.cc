#include "graph/passes.h"

#include <algorithm>
#include <map>
#include <set>

#include "graph/outer_scope.h"
#include "graph/rewrite.h"
#include "ops/framework/evaluate.h"
#include "ops/framework/kernel.h"

namespace onnxflow::graph {
namespace {

bool IsNondeterministic(const Node& node) {
  static const std::set<std::string> kRandom = {"RandomNormal", "RandomUniform", "RandomNormalLike",
                                                "RandomUniformLike", "Bernoulli", "Multinomial"};
  return node.domain.empty() && kRandom.count(node.op_type()) > 0;
}

// Runs one node on constant inputs (ops/framework/evaluate.h); its outputs, or an error.
Result<std::vector<Tensor>> Evaluate(const Graph& g, const Node& node, const KernelRegistry& registry,
                                     const SessionLimits& limits) {
  const KernelDef* def = registry.Find(node.domain, node.op_type(), node.opset);
  if (def == nullptr) return Unimplemented("no kernel");
  std::vector<Value> inputs;
  std::vector<const Tensor*> constants;
  for (const auto& name : node.proto->input()) {
    inputs.emplace_back(name.empty() ? Value() : Value(g.constants.at(name)));
    constants.push_back(name.empty() ? nullptr : &g.constants.at(name));
  }
  KernelInfo info(*node.proto, node.opset, KnownInputTypes(g, node), constants, {});
  EvaluateOptions options;
  options.limits = limits;
  ONNXFLOW_ASSIGN_OR_RETURN(std::vector<Value> values, EvaluateNode(*def, info, std::move(inputs), options));
  std::vector<Tensor> outputs;
  for (size_t i = 0; i < values.size(); ++i) {
    const bool absent = node.proto->output(static_cast<int>(i)).empty();
    if (!absent && !values[i].is_tensor()) return Unimplemented("non-tensor output");
    outputs.push_back(absent ? Tensor() : values[i].tensor());
  }
  return outputs;
}

}  // namespace

namespace {
template <class Names>
std::vector<DataType> KnownTypes(const Graph& g, const Names& names) {
  std::vector<DataType> types;
  for (const auto& name : names) {
    auto it = g.known_types.find(name);
    types.push_back(it == g.known_types.end() ? DataType::kUndefined : it->second);
  }
  return types;
}
}  // namespace

std::vector<DataType> KnownInputTypes(const Graph& g, const Node& node) { return KnownTypes(g, node.proto->input()); }
std::vector<DataType> KnownOutputTypes(const Graph& g, const Node& node) { return KnownTypes(g, node.proto->output()); }

namespace {

// Folded constants live as long as the session, so their total is held to max_run_bytes: a small
// file must not make the load allocate without bound (thousands of ConstantOfShape nodes, each
// under max_tensor_bytes). A node past the budget stays in the graph and runs under the run's own
// limits, which end the run with a Status naming the limit and the node.
// `constant_nodes_only`: the Constant nodes alone.
Status FoldWithin(Graph* g, const KernelRegistry& registry, const SessionLimits& limits, bool constant_nodes_only,
                  int64_t* folded_bytes) {
  for (const Node& node : g->nodes) {
    for (const auto& [name, sub] : node.subgraphs) {
      ONNXFLOW_RETURN_IF_ERROR(FoldWithin(sub.get(), registry, limits, constant_nodes_only, folded_bytes));
    }
  }
  // A node whose inputs are all constants is replaced by its outputs, as constants.
  auto fold = [&](Rewriter& r, Id id) -> std::optional<Patch> {
    const Node& node = r[id];
    if (!node.subgraphs.empty() || IsNondeterministic(node)) return std::nullopt;
    if (constant_nodes_only && !(node.domain.empty() && node.op_type() == "Constant")) return std::nullopt;
    for (const auto& name : node.proto->input()) {
      if (!name.empty() && !g->constants.count(name)) return std::nullopt;
    }
    SessionLimits remaining = limits;
    remaining.max_run_bytes = std::max<int64_t>(0, limits.max_run_bytes - *folded_bytes);
    auto outputs = Evaluate(*g, node, registry, remaining);
    // Not foldable after all (unsupported, fails on these values, or past the budget): the run
    // computes it, or reports why not.
    if (!outputs.ok()) return std::nullopt;
    Patch patch{{id}, {}, {}};
    for (int i = 0; i < node.proto->output_size(); ++i) {
      const std::string& name = node.proto->output(i);
      *folded_bytes += static_cast<int64_t>((*outputs)[i].nbytes());
      if (!name.empty()) patch.constants.emplace_back(name, std::move((*outputs)[i]));
    }
    return patch;
  };
  return RunRule(g, "FoldConstants", fold);
}

void CollectUnsupported(const Graph& g, const KernelRegistry& registry, std::vector<Unsupported>* nodes) {
  for (const Node& node : g.nodes) {
    for (const auto& [name, sub] : node.subgraphs) CollectUnsupported(*sub, registry, nodes);
    if (registry.Find(node.domain, node.op_type(), node.opset) == nullptr) {
      nodes->push_back(UnsupportedNode(node, NotFound("")));
    }
  }
}

}  // namespace

Unsupported UnsupportedNode(const Node& node, const Status& why) {
  return {node.Describe(),
          ", domain '" + (node.domain.empty() ? "ai.onnx" : node.domain) + "', opset " + std::to_string(node.opset),
          why.code() != StatusCode::kNotFound ? why.message() : std::string()};
}

Status RefuseUnsupported(const std::vector<Unsupported>& nodes) {
  if (nodes.empty()) return Status::Ok();
  std::string message = std::to_string(nodes.size()) + " unsupported node" + (nodes.size() > 1 ? "s" : "") + ": ";
  std::map<std::string, std::string> given;  // reasons already in the message, and the node they followed
  const size_t listed = std::min(nodes.size(), kListedUnsupported);
  for (size_t k = 0; k < listed; ++k) {
    const Unsupported& u = nodes[k];
    message += (k ? "; " : "") + u.node;
    if (u.why.empty()) {
      message += u.where;
      continue;
    }
    // A reason given already: the node and the one it followed (a model saved at ONNX Runtime's
    // 'all' level has dozens of nodes of one private domain).
    const auto [first, added] = given.emplace(u.why, u.node);
    message += added ? u.where + ": " + u.why : " (as " + first->second + ")";
  }
  if (listed < nodes.size()) message += "; and " + std::to_string(nodes.size() - listed) + " more";
  return Unimplemented(message);
}

Status CheckKernelsExist(const Graph& g, const KernelRegistry& registry) {
  std::vector<Unsupported> unsupported;
  CollectUnsupported(g, registry, &unsupported);
  return RefuseUnsupported(unsupported);
}

Status FoldConstants(Graph* g, const KernelRegistry& registry, const SessionLimits& limits) {
  int64_t folded_bytes = 0;
  // What a scope folds, its subgraphs may read: they inherit it and fold again, a round per
  // nesting level that gained constants (Silero VAD's LSTM weights are Slices and Concats of
  // Constant nodes two Ifs up; left unfolded, they were sliced and joined on every run, and its
  // convolutions packed no weights). Each name is inherited once, so the rounds end.
  do {
    ONNXFLOW_RETURN_IF_ERROR(FoldWithin(g, registry, limits, /*constant_nodes_only=*/false, &folded_bytes));
  } while (InheritOuterScope(g) > 0);
  return Status::Ok();
}

Status FoldConstantNodes(Graph* g, const KernelRegistry& registry, const SessionLimits& limits) {
  int64_t folded_bytes = 0;
  return FoldWithin(g, registry, limits, /*constant_nodes_only=*/true, &folded_bytes);
}

void RemoveDeadNodes(Graph* g) {
  // From the last node back: a node none of whose outputs is read goes, and with it its reads,
  // so the nodes only it read go in the same walk.
  const std::vector<Id> order = g->nodes.Order();
  for (auto it = order.rbegin(); it != order.rend(); ++it) {
    bool read = false;
    for (const auto& out : g->nodes[*it].proto->output()) read |= !out.empty() && g->nodes.ReadCount(out) > 0;
    if (!read) g->nodes.Remove(*it);
  }
  g->nodes.Compact();
  for (auto it = g->constants.begin(); it != g->constants.end();) {
    const bool kept = g->nodes.ReadCount(it->first) > 0 || IsGraphInput(*g, it->first);
    it = kept ? std::next(it) : g->constants.erase(it);
  }
  for (const Node& node : g->nodes) {
    for (const auto& [name, sub] : node.subgraphs) RemoveDeadNodes(sub.get());
  }
}

}  // namespace onnxflow::graph
