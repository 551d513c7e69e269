// Graph passes run at load, before planning. Each keeps the graph's outputs unchanged.
#pragma once

#include "graph/graph.h"
#include "ops/framework/registry.h"

namespace onnxflow::graph {

// One node no kernel runs: "node 'n' (Op)", where (", domain 'ai.onnx', opset 17"), and why
// (empty when no kernel is registered for it, NotFound). A subgraph refused whole is its message
// alone, in `node`.
struct Unsupported {
  std::string node;
  std::string where;
  std::string why;
};
Unsupported UnsupportedNode(const Node& node, const Status& why);

// The single message that refuses a model with unsupported nodes (Unimplemented): their count,
// then each node, a reason that several share given once (after the first of them), at most
// kListedUnsupported nodes named. (A model ONNX Runtime saved at its 'all' level has a hundred
// nodes of its private layout, whose one reason repeated made a 35 KB line.)
inline constexpr size_t kListedUnsupported = 20;
Status RefuseUnsupported(const std::vector<Unsupported>& nodes);

// Refuses (Unimplemented, one message listing every one) a graph, subgraphs included, with nodes
// whose op no kernel in `registry` implements at the node's opset. The load runs it on the nodes
// the user wrote, before any pass: the refusal names their nodes, never a fused one, and no pass
// spends time on a model that is refused.
Status CheckKernelsExist(const Graph& graph, const KernelRegistry& registry);

// Runs every node whose inputs are all constants once, with the same kernel the plan would use,
// and keeps its outputs as constants (so weights built by ConstantOfShape/Constant chains cost
// nothing per run). Random ops and nodes with subgraphs are left alone. Recurses into subgraphs,
// which inherit what their enclosing scopes folded (InheritOuterScope) and fold with it.
Status FoldConstants(Graph* graph, const KernelRegistry& registry, const SessionLimits& limits);

// The Constant nodes alone become constants: what the passes that run before FoldConstants look
// for as a constant (FuseQdq's weights and Clip bounds) may be written as a Constant node.
Status FoldConstantNodes(Graph* graph, const KernelRegistry& registry, const SessionLimits& limits);

// Removes nodes none of whose outputs is read, and constants nobody reads.
void RemoveDeadNodes(Graph* graph);

// The element types of a node's inputs (outputs) known at load (kUndefined where not).
std::vector<DataType> KnownInputTypes(const Graph& graph, const Node& node);
std::vector<DataType> KnownOutputTypes(const Graph& graph, const Node& node);

}  // namespace onnxflow::graph
