// What the load-time fusions (fusion.cc, chain_fusion.cc) share: who reads and who produces each
// value, attribute and type lookups, and the loop that applies one rule over a graph. Internal to
// graph/.
#pragma once

#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/graph.h"
#include "ops/math/fused_activation.h"

namespace onnxflow::graph {

struct Uses {
  std::map<std::string, int> readers;  // node inputs, implicit inputs and graph outputs
  std::map<std::string, int> producer;
};

Uses CountUses(const Graph& g);

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name);

// Input `input` of `n` when it is a float constant; null otherwise.
const Tensor* FloatConstant(const Graph& g, const onnx::NodeProto& n, int input);

// The element type of a value when the load knows it (graph inputs, value_info, constants).
DataType KnownType(const Graph& g, const std::string& name);

bool IsOp(const Node& n, const char* op);

// The producer of `value` when exactly `readers` reads of it are all there are (a graph output
// counts as two); -1 otherwise.
int ProducerReadBy(const Uses& u, const std::string& value, int readers);

// The producer of `value` when exactly one node reads it (and it is not a graph output); -1 otherwise.
int SoleReaderProducer(const Uses& u, const std::string& value);

// The node after `from` that reads `value`, when it is the value's only reader and holds no
// subgraphs; -1 otherwise.
int SoleReaderAfter(const Graph& g, const Uses& u, const std::string& value, size_t from);

// The producer of `n`'s first input when `n` is its only reader; -1 otherwise.
int SoleProducer(const Graph& g, const Uses& u, const Node& n);

// The fused kernels are float only. Conv, Gemm and MatMul take X and W (A and B) of one type T, so
// a float weight (a constant, typed at load) settles it when X's type is not known at load.
bool IsFloatProduct(const Graph& g, const Node& producer);

// The epilogue computing activation node `act` (Relu, LeakyRelu, Clip with constant bounds,
// Sigmoid, Tanh, HardSigmoid: FusedActivationSpec::From), its parameters read with the ONNX
// defaults of the vocabulary (ops/framework/activation.h); false when no epilogue computes it.
bool EpilogueOf(const Graph& g, const Node& act, FusedActivationSpec* spec);

// Whether EpilogueOf finds an epilogue for `act`.
bool IsEpilogueActivation(const Graph& g, const Node& act);

// Gives `node` the epilogue of `act` (FusedActivationSpec::WriteTo) when IsEpilogueActivation;
// false and `node` unchanged otherwise.
bool AddEpilogueActivation(const Graph& g, const Node& act, onnx::NodeProto* node);

// Whether a fused or blocked node applies an epilogue activation already.
bool HasEpilogue(const Node& fused);

// Makes `node` (a copy of a Conv, Gemm, MatMul or an internal op's node) internal op `op_type`
// of kOnnxflowDomain.
void MakeInternal(Node* node, onnx::NodeProto* proto, const char* op_type);

// The `channels` values of a float constant `t` that scales or shifts each channel of a value of
// rank `rank` (channels on axis 1) by one number, broadcasting without changing the value's shape:
// [C, 1, 1] or [1, C, 1, 1] for an image, or a single number. Empty for any other constant.
std::vector<float> PerChannelValues(const Tensor& t, int64_t rank, int64_t channels);

// Sets attribute `name` of `n` to `value`, replacing it when `n` has it. For ONNX ops a pass
// writes (LayerNormalization's axis, say); an internal op's attributes are its spec's to write.
void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t value);
void SetFloatAttr(onnx::NodeProto* n, const std::string& name, float value);
void SetStringAttr(onnx::NodeProto* n, const std::string& name, const std::string& value);

// Every name a graph and its subgraphs use (constants, inputs, node inputs and outputs), and
// fresh names none of them use, for the values a pass adds.
class NameSet {
 public:
  explicit NameSet(const Graph& g);
  // `base`, else `base#1`, `base#2`, ...: the first not in use, in use from then on.
  std::string Fresh(const std::string& base);

 private:
  void Collect(const Graph& g);
  std::unordered_set<std::string> names_;
};

// A rule looks at node `index`; when it fuses, it marks the nodes it absorbed in `removed` and
// keeps `u` up to date (a fusion only moves a fused output to the surviving node).
using FusionRule = bool (*)(Graph* g, Uses& u, size_t index, std::vector<bool>* removed);

// Runs `rule` at every node in order, then drops the removed nodes.
void Apply(Graph* g, FusionRule rule);

}  // namespace onnxflow::graph
