// Graph passes run at load, before planning. Each keeps the graph's outputs unchanged.
#pragma once

#include "graph/graph.h"
#include "ops/framework/registry.h"

namespace onnxflow::graph {

// "node 'n' (Op), domain 'ai.onnx', opset 17", and why when `why` is not NotFound: one entry of
// the single message that refuses an unsupported model.
std::string UnsupportedLine(const Node& node, const Status& why);

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

// Removes nodes none of whose outputs is read, and constants nobody reads.
void RemoveDeadNodes(Graph* graph);

// The element types of a node's inputs (outputs) known at load (kUndefined where not).
std::vector<DataType> KnownInputTypes(const Graph& graph, const Node& node);
std::vector<DataType> KnownOutputTypes(const Graph& graph, const Node& node);

}  // namespace onnxflow::graph
