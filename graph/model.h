// Loading a model: parse the ModelProto (from a file or bytes), check what the spec demands of
// the IR version and opset imports, inline model-local functions, build and validate the graph,
// and run the load-time passes.
#pragma once

#include <memory>
#include <string>

#include "graph/external_data.h"
#include "graph/graph.h"
#include "ops/framework/registry.h"

namespace onnxflow::graph {

// IR versions this runtime reads: 3 (the first with opset imports) through 13; older files are
// read with the default domain at opset 1 semantics when they import nothing.
inline constexpr int64_t kMinIrVersion = 1;
inline constexpr int64_t kMaxIrVersion = 13;
// The newest default-domain opset with kernels here.
inline constexpr int kMaxOnnxOpset = 28;

struct Model {
  onnx::ModelProto proto;  // after Load: only the description (no nodes, weights or functions)
  OpsetMap opsets;
  std::unique_ptr<ExternalDataFiles> external;  // keeps mapped files alive
  std::shared_ptr<Graph> graph;                 // the main graph, after passes
};

Result<std::unique_ptr<Model>> LoadModelFile(const std::string& path, const SessionOptions& options,
                                             const KernelRegistry& registry);
// `directory` resolves external data ("" refuses it).
Result<std::unique_ptr<Model>> LoadModelBytes(const std::string& bytes, const std::string& directory,
                                              const SessionOptions& options, const KernelRegistry& registry);

}  // namespace onnxflow::graph
