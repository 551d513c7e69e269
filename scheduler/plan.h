// The immutable execution plan of one scope (the main graph or a subgraph).
//
// Every value gets a slot in a run's value table. Each node knows its kernel (built once, with
// attributes parsed and weights packed), its slots, and the nodes that wait for it. Nodes are
// grouped into tasks: maximal chains in which each node is the only consumer-node of the one
// before, so a chain of cheap nodes costs the flow graph one task, not one per node, and no
// parallelism is lost (a chain is serial anyway).
#pragma once

#include <climits>
#include <memory>
#include <string>
#include <vector>

#include "graph/graph.h"
#include "include/onnxflow/session.h"
#include "ops/framework/kernel.h"
#include "ops/framework/registry.h"
#include "ops/framework/subgraph.h"

namespace onnxflow {

struct PlanNode {
  std::string description;  // "node 'conv1' (Conv)" for messages
  std::string name;         // the node's name, or its op type when unnamed
  std::string op_type;
  std::unique_ptr<OpKernel> kernel;
  NodeSlots slots;
  std::vector<std::unique_ptr<Subgraph>> subgraphs;  // owned child plans (If/Loop/Scan bodies)
  // Input slots (explicit and implicit, each once) whose last reader may be this node.
  std::vector<int> reads;
};

struct PlanTask {
  std::vector<int> nodes;       // run in this order
  std::vector<int> successors;  // tasks that wait for this one
  int predecessors = 0;
};

class Plan {
 public:
  // `outer_scope` maps names read from enclosing scopes to the index of the parent node's implicit
  // input that carries them (empty for the main graph). `depth` is the nesting level. The graph's
  // constants that kernels copied at load are emptied as the kernels take them (ConstantRelease in
  // plan.cc): the graph is not planned twice.
  static Result<std::unique_ptr<Plan>> Build(graph::Graph& graph, const std::vector<std::string>& outer_scope,
                                             const KernelRegistry& registry, const SessionOptions& options,
                                             int depth);

  int slot_count() const { return static_cast<int>(slot_names_.size()); }
  const std::vector<PlanNode>& nodes() const { return nodes_; }
  const std::vector<PlanTask>& tasks() const { return tasks_; }
  const std::vector<int>& root_tasks() const { return root_tasks_; }
  // Constant values (initializers, folded nodes), preloaded into each run's table.
  const std::vector<std::pair<int, Value>>& constants() const { return constants_; }
  // Initializers no kernel reads at run time (OpKernel::ReadsAtRun), left out of constants().
  const std::vector<std::string>& released_constants() const { return released_constants_; }
  const std::vector<int>& input_slots() const { return input_slots_; }
  const std::vector<int>& output_slots() const { return output_slots_; }
  // outer slot <- index of the parent's implicit input
  const std::vector<std::pair<int, int>>& outer_slots() const { return outer_slots_; }
  // Readers per slot (a node reading a slot twice counts once); kNeverFree for values that
  // outlive the run's nodes (outputs, constants, outer values).
  static constexpr int kNeverFree = INT_MAX;
  const std::vector<int>& reader_counts() const { return reader_counts_; }
  // Sequential mode frees these slots right after node i.
  const std::vector<std::vector<int>>& free_after() const { return free_after_; }
  const std::vector<ValueInfo>& inputs() const { return inputs_; }
  const std::vector<ValueInfo>& outputs() const { return outputs_; }
  const std::string& slot_name(int slot) const { return slot_names_[slot]; }
  // The widest level of the DAG: 1 means a chain, where a flow graph cannot help.
  int width() const { return width_; }

 private:
  std::vector<std::string> slot_names_;
  std::vector<PlanNode> nodes_;
  std::vector<PlanTask> tasks_;
  std::vector<int> root_tasks_;
  std::vector<std::pair<int, Value>> constants_;
  std::vector<std::string> released_constants_;
  std::vector<int> input_slots_, output_slots_;
  std::vector<std::pair<int, int>> outer_slots_;
  std::vector<int> reader_counts_;
  std::vector<std::vector<int>> free_after_;
  std::vector<ValueInfo> inputs_, outputs_;
  int width_ = 1;
};

}  // namespace onnxflow
