// Operator domains beyond the ONNX ones the registry names (registry.h): ONNX Runtime's contrib
// operators, which files saved by ONNX Runtime and transformer exporters carry. A header of its own
// so that the families using it depend on it, not every kernel.
#pragma once

namespace onnxflow {

inline const char kMsDomain[] = "com.microsoft";

}  // namespace onnxflow
