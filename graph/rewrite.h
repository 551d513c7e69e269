// Rewrite rules and the one driver that applies them.
//
// A rule looks at one node of the live IR (graph/node_graph.h) and, when its pattern matches
// there, returns a Patch: the nodes it replaces and the nodes (and constants) that take their
// place. It reads the graph and never edits it. The driver checks the patch against the graph
// (every value a replaced node wrote that is still read, or is a graph output, is written again;
// every input of an added node is defined; no value is written twice) and applies it; the IR
// rewires the edges. A patch that breaks these is a bug in its rule: the load fails with an
// Internal status naming the rule, instead of running a wrong graph.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "graph/fusion_util.h"
#include "graph/graph.h"

namespace onnxflow::graph {

struct Patch {
  std::vector<NodeGraph::Id> replaced;                     // matched nodes, all live
  std::vector<Node> added;                                 // in order, at the first replaced node's place
  // New constants: read by the added nodes, or values a replaced node wrote (constant folding).
  std::vector<std::pair<std::string, Tensor>> constants;
  // Element types of values the added nodes write, recorded for later passes; one that
  // contradicts a type the load knew is refused.
  std::vector<std::pair<std::string, DataType>> types;
  // Where an added node goes, when not at the first replaced node's place: at[k] is the node
  // whose place added[k] takes, or next to which it goes (NodeGraph's order keeps the file's order
  // where the edges allow it).
  std::vector<NodeGraph::Id> at;

  // Adds `node` at the place of `where` (None(): the first replaced node's).
  void AddAt(Node node, NodeGraph::Id where) {
    at.resize(added.size(), NodeGraph::None());
    added.push_back(std::move(node));
    at.push_back(where);
  }
};

// What a rule sees: the graph, read only, and fresh names for the values it adds.
class Rewriter {
 public:
  explicit Rewriter(Graph* g) : g_(g) {}
  const Graph& graph() const { return *g_; }
  const NodeGraph& nodes() const { return g_->nodes; }
  const Node& operator[](NodeGraph::Id id) const { return g_->nodes[id]; }
  // `base`, or `base#k` when that is taken (NameSet).
  std::string FreshName(const std::string& base);

 private:
  Graph* g_;
  std::optional<NameSet> names_;
};

using Rule = std::function<std::optional<Patch>(Rewriter& r, NodeGraph::Id id)>;

// Applies `patch` after checking it (above; the cycle check is CheckAcyclic's, once a walk is over).
// `rule` names it in the error.
Status ApplyPatch(Graph* g, Patch patch, const char* rule);

// An Internal status naming `rule` when `g`'s nodes hold a cycle (a patch closed it).
Status CheckAcyclic(const Graph& g, const char* rule);

// Runs `rule` at every node of `g` (not its subgraphs) in order, applying each patch at once, so
// the next match sees it. The walk covers the nodes present when it starts; nodes a patch adds
// are seen as producers by later matches. Ends with the graph checked for cycles.
Status RunRule(Graph* g, const char* name, const Rule& rule);

// The same over `g` and every subgraph under it.
Status RunRuleEverywhere(Graph* g, const char* name, const Rule& rule);

}  // namespace onnxflow::graph
