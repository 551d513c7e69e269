// What the QDQ rules share (graph/qdq_fusion.cc's group fusions, graph/qdq_lookup.cc's
// ByteLookups): Q and DQ nodes, their constant parameters, and the constants a patch adds.
// Internal to graph/.
#pragma once

#include <string>

#include "graph/graph.h"
#include "graph/rewrite.h"

namespace onnxflow::graph {

// `n` is `op` of the ONNX domain or com.microsoft's (which has QuantizeLinear and
// DequantizeLinear too).
bool IsQdqOp(const Node& n, const char* op);

// Input `input` of `n` when it is a constant; null otherwise (absent or left empty too).
const Tensor* Constant(const Graph& g, const onnx::NodeProto& n, int input);

inline bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

// The type of the quantized side of Q or DQ `n` (`quantized`: its input for DQ, output for Q):
// the zero point's (`zero`, null when there is none), else a Q's output_dtype (uint8 when not
// given), else what the load knows of `quantized`.
DataType QuantizedType(const Graph& g, const Node& n, const Tensor* zero, const std::string& quantized);

// One side of a quantized op: the 8-bit value, its scale and zero point (names of constants).
struct QSide {
  std::string value, scale, zero;
  DataType type = DataType::kUndefined;
  float scale_value = 0, zero_value = 0;
};

// Adds constant `t` as `name` to what `patch` adds, unless the graph or the patch has it already
// (the rule's names are functions of what they hold).
void AddConstant(const Graph& g, Patch* patch, const std::string& name, Tensor t);

// A constant zero point of `type` (0), one per graph.
std::string ZeroConstant(const Graph& g, Patch* patch, DataType type);

// Reads the per-tensor constant parameters of a Q or DQ node (inputs 1 and 2) and the 8-bit type
// of its quantized side (`quantized` is its input for DQ, output for Q). False when they are not
// constants with one element, the type is not 8-bit or attributes change the meaning.
bool PerTensorParams(const Graph& g, Patch* patch, const Node& n, const std::string& quantized, QSide* side);

}  // namespace onnxflow::graph
