// The bundled demo: a small CNN the project builds in code (no file to ship), with fixed
// pseudo-random weights so every run prints the same numbers.
#pragma once

#include <string>

namespace onnxflow::tools {

// A serialized ModelProto: input "image" [1,3,32,32] -> Conv 3->16 3x3 + Relu -> MaxPool 2 ->
// Conv 16->32 3x3 + BatchNormalization + Relu -> GlobalAveragePool -> Flatten -> Gemm 32->10 ->
// Softmax -> output "probabilities" [1,10].
std::string DemoModelBytes();

}  // namespace onnxflow::tools
