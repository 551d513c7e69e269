// `run_model --info MODEL`: what a model declares and contains, without running it — inputs and
// outputs (element type, dims, symbolic dim names), opset imports, metadata, the op histogram;
// with `optimized`, the graph after the load passes, each fused node with the ONNX nodes it
// replaced.
#pragma once

#include <string>

#include "include/onnxflow/session.h"

namespace onnxflow::tools {

struct InspectOptions {
  bool optimized = false;  // describe the graph after the load passes
  bool json = false;       // one JSON object instead of text
};

// The description, or the Status that refused the model (as Session::Load would).
Result<std::string> InspectModel(const std::string& path, const SessionOptions& session_options,
                                 const InspectOptions& options);

}  // namespace onnxflow::tools
