// Element types through the graph at load (issue 23), subgraphs included: every value's tensor
// element type that follows from the graph inputs, the initializers and the operator schemas
// (graph/schema). Refused at load: a node input whose type its schema does not allow or that
// disagrees with another input of the same type variable; a graph or subgraph output declared
// with a type the graph does not produce; If branches that return another number of outputs than
// the node has, or types that disagree; Loop and Scan bodies that do not fit their node. (A
// subgraph's reuse of an enclosing name is renamed apart before, graph/scope_names.h; were one
// left, it would be refused here.)
#pragma once

#include "graph/graph.h"

namespace onnxflow::graph {

// Records the types it finds in each graph's known_types.
Status InferTypes(Graph* main);

}  // namespace onnxflow::graph
