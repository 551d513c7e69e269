// The dataflow DAG of one scope as a Boost.Graph adjacency_list: a vertex per node, an edge from
// each producer to each consumer. Used to order nodes topologically, to find cycles, and by the
// scheduler to wire the flow graph.
#pragma once

#include <string>
#include <vector>

#include <boost/graph/adjacency_list.hpp>

#include "include/onnxflow/status.h"

namespace onnxflow::graph {

using Dag = boost::adjacency_list<boost::setS, boost::vecS, boost::bidirectionalS>;

// `node_inputs[i]` / `node_outputs[i]`: value names node i reads / writes; names that no node
// writes are graph inputs or constants. Returns the DAG over node indices.
Dag BuildDag(const std::vector<std::vector<std::string>>& node_inputs,
             const std::vector<std::vector<std::string>>& node_outputs);

// Kahn's algorithm over the DAG: a topological order, or the indices of nodes on or behind a
// cycle (in `cycle`) when there is none.
bool TopologicalOrder(const Dag& dag, std::vector<int>* order, std::vector<int>* cycle);

}  // namespace onnxflow::graph
