// Valid models of many nodes, for load-time tests and tools/load_benchmark (issue 23: load time
// must grow linearly with the model).
#pragma once

#include <cstdint>
#include <string>

namespace onnxflow::tools {

// `nodes` elementwise ops one after another (Relu, Neg, Abs, Sigmoid in turn) on a [4] float.
std::string ChainOfElementwise(int64_t nodes);
// `nodes` - 1 independent Relu branches of one input, joined by one Sum of them all.
std::string WideBranches(int64_t nodes);
// If nodes nested `depth` deep (then_branch holds the next level), each level holding a chain of
// `nodes_per_level` elementwise ops over a value of the main graph.
std::string NestedSubgraphs(int depth, int64_t nodes_per_level);

}  // namespace onnxflow::tools
