// Subgraphs that reuse a name from an enclosing graph. ONNX forbids it (IR.md: names are unique
// across a graph and the graphs nested in it), but ONNX Runtime runs such files, and writes them:
// a model saved after its optimizations can hold, inside a Loop body, constants folded under the
// names the main graph also gives them (torchvision's Mask R-CNN saved at the extended level).
// ONNX Runtime reads the innermost definition of a name; renaming each such definition apart,
// with the reads it shadows, keeps that meaning and leaves a file the rest of the load accepts.
#pragma once

#include "proto/onnx.pb.h"

namespace onnxflow::graph {

// Renames every value a subgraph of `main` (at any depth) defines under a name visible from an
// enclosing graph, and that subgraph's reads of it (its nested subgraphs' too, where they do not
// define the name again), to a name used nowhere in the model. The main graph is left as it is.
void RenameShadowedNames(onnx::GraphProto* main);

}  // namespace onnxflow::graph
