// The live graph IR of one scope: a Boost.Graph adjacency_list with a vertex per node and an edge
// from each producer to each reader, labelled with the value that flows. It is built at load and
// kept until the plan is built: the passes edit it through the calls below, which keep the edges
// and the value indexes (who produces a value, who reads it) up to date, so no pass maintains a
// map of its own; the plan reads the same edges to order and wire the run.
//
// Vertices live in a list, so a node's Id stays valid while other nodes come and go. A removed
// node is detached at once and its vertex freed at Compact(), so a pass may walk a snapshot of the
// order while it edits (IsLive tells which entries are gone).
//
// The order: a topological order that keeps the nodes where they were, computed when asked for
// after an edit. Each node carries a key (its position in the file; a node a pass adds takes the
// key of the node it takes the place of), and Kahn's algorithm releases ready nodes by key.
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "graph/node.h"
#include "include/onnxflow/status.h"

namespace onnxflow::graph {

class NodeGraph {
 public:
  // (position in the file, order of addition among nodes that took that position)
  using Key = std::pair<int64_t, int64_t>;
  struct VertexData {
    Node node;
    Key key;
    bool live = true;
    int position = -1;  // in Order(), while it is current
  };
  struct EdgeData {
    std::string value;  // what the reader reads from the producer
  };
  using Dag = boost::adjacency_list<boost::vecS, boost::listS, boost::bidirectionalS, VertexData, EdgeData>;
  using Id = Dag::vertex_descriptor;
  static Id None() { return Dag::null_vertex(); }

  NodeGraph() = default;
  NodeGraph(const NodeGraph&) = delete;
  NodeGraph& operator=(const NodeGraph&) = delete;

  // -- Reading --------------------------------------------------------------------------------

  // The live nodes in topological order (see above). Invalidated by any edit: a pass that edits
  // while it walks copies it first.
  const std::vector<Id>& Order() const;
  size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  const Node& operator[](Id id) const { return dag_[id].node; }
  // The node at `position` in Order() (tests and tools that print the graph).
  const Node& At(size_t position) const { return (*this)[Order()[position]]; }
  bool IsLive(Id id) const { return dag_[id].live; }
  const Dag& dag() const { return dag_; }

  // The node writing `value`; None() for graph inputs, constants and outer values.
  Id Producer(const std::string& value) const;
  // Every read of `value`: each node input slot and implicit input counts one, a graph output two
  // (so a graph output is never "read once" and fused away).
  int ReadCount(const std::string& value) const;
  // The nodes reading `value` (a node reading it twice is listed twice).
  const std::vector<Id>& Readers(const std::string& value) const;
  bool IsOutput(const std::string& value) const { return outputs_.count(value) != 0; }

  // Iteration over Order() as nodes: `for (const Node& n : g.nodes)`.
  class Iterator {
   public:
    Iterator(const NodeGraph* g, size_t i) : g_(g), i_(i) {}
    const Node& operator*() const { return (*g_)[g_->Order()[i_]]; }
    const Node* operator->() const { return &**this; }
    Iterator& operator++() { ++i_; return *this; }
    bool operator!=(const Iterator& o) const { return i_ != o.i_; }
    bool operator==(const Iterator& o) const { return i_ == o.i_; }

   private:
    const NodeGraph* g_;
    size_t i_;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, Order().size()); }

  // -- Editing --------------------------------------------------------------------------------

  // Adds `node` at `key` (Key of the node it replaces; AppendKey() for a new one at the end) and
  // connects it to the producers of its inputs and the readers of its outputs.
  Id Add(Node node, Key key);
  Key AppendKey() { return {next_position_++, 0}; }
  // A key just after `key` among the nodes placed there (a node that takes another's place).
  Key KeyAt(Key key) { return {key.first, ++next_minor_}; }
  Key KeyOf(Id id) const { return dag_[id].key; }
  // Detaches `id` and releases its node; the vertex goes at Compact().
  void Remove(Id id);
  // Gives `id` a new proto (inputs and outputs may change); edges follow.
  void SetProto(Id id, std::shared_ptr<const onnx::NodeProto> proto);
  // Gives `id` new implicit inputs (the outer values its subgraphs read); read counts follow.
  void SetImplicitInputs(Id id, std::vector<std::string> names);
  // Mutable access to what edges do not depend on: domain, opset, subgraphs.
  Node& Mutable(Id id) { return dag_[id].node; }
  // The graph's outputs, counted as reads (ReadCount).
  void SetOutputs(const std::vector<std::string>& names);
  // Frees the vertices of removed nodes. Ids of removed nodes are invalid afterwards.
  void Compact();

  // A cycle: up to `limit` nodes on or behind it; empty for a DAG.
  std::vector<Id> Cycle(size_t limit) const;

 private:
  void Attach(Id id);
  void Detach(Id id);
  void Invalidate() { order_valid_ = false; }

  Dag dag_;
  size_t live_ = 0;
  int64_t next_position_ = 0, next_minor_ = 0;
  std::unordered_map<std::string, Id> producer_;
  std::unordered_map<std::string, std::vector<Id>> readers_;
  std::unordered_set<std::string> outputs_;
  std::vector<Id> dead_;
  mutable std::vector<Id> order_;
  mutable bool order_valid_ = true;
  mutable bool acyclic_ = true;
};

}  // namespace onnxflow::graph
