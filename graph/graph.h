// The graph IR between the ModelProto and the execution plan.
//
// A Graph is one scope (the main graph or a subgraph): its nodes as a live DAG (NodeGraph), the
// constants it holds (initializers and folded values), its inputs and outputs, and the names it
// reads from enclosing scopes. Nodes with graph attributes (If/Loop/Scan) carry their subgraphs
// already built, and list the outer-scope values those read as implicit inputs, so the scheduler
// orders them after the producers of those values.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "graph/node.h"
#include "graph/node_graph.h"
#include "include/onnxflow/session.h"
#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "proto/onnx.pb.h"

namespace onnxflow::graph {

// Normalized domain ("" for ai.onnx) -> the model's opset version.
using OpsetMap = std::map<std::string, int>;

struct Graph {
  std::string name;
  NodeGraph nodes;                           // the live IR: nodes, edges, order (node_graph.h)
  std::map<std::string, Tensor> constants;   // initializers, Constant outputs after folding
  std::vector<ValueInfo> inputs;             // graph inputs, in order (incl. those with initializers)
  std::vector<ValueInfo> outputs;
  std::set<std::string> outer_names;         // names read from enclosing scopes
  // Graph inputs of enclosing scopes that this graph reads, as declared there (InheritOuterScope):
  // what a pass would know of them were they this graph's own inputs.
  std::map<std::string, ValueInfo> outer_inputs;
  std::map<std::string, DataType> known_types;  // element types known at load, by value name
  // Float values that the model declares float16 and the load computes in float (ComputeHalfInFloat's
  // twins, and the blocked layout's copies of them): storing one rounded to float16 is the model's
  // own rounding (graph/blocked_half.h).
  std::set<std::string> declared_half;
};

// Whether `name` is one of `g`'s inputs (with or without an initializer).
bool IsGraphInput(const Graph& g, const std::string& name);

// Declared type of a ValueInfoProto.
ValueInfo ToValueInfo(const onnx::ValueInfoProto& info);

// Builds and validates one scope: SSA, every input defined (here or in `outer_scope`), a valid
// topological order (the Boost.Graph DAG sorts the nodes and finds cycles), subgraphs recursively.
// `depth` counts nesting for the limit in `limits`.
struct BuildContext {
  const OpsetMap* opsets;
  const SessionLimits* limits;
  class ExternalDataFiles* external;  // may be null (no external data allowed)
  // The graph whose initializers' bytes BuildGraph may take over (as the tensors' storage) or let
  // go of once copied (the main graph of a model the loader owns and drops afterwards): the parsed
  // weights and their copies then never exist side by side, which lowers the load's peak by the
  // weights' size.
  onnx::GraphProto* consumable = nullptr;
};
Result<std::shared_ptr<Graph>> BuildGraph(const onnx::GraphProto& proto, const std::set<std::string>& outer_scope,
                                          const BuildContext& ctx, int depth);

}  // namespace onnxflow::graph
