// What the load-time rules share: producer and reader queries over the live IR, attribute and
// type lookups, the epilogue vocabulary, fresh names. Internal to graph/.
#pragma once

#include <initializer_list>
#include <map>
#include <string>
#include <unordered_set>
#include <vector>

#include "graph/graph.h"
#include "ops/math/fused_activation.h"

namespace onnxflow::graph {

using Id = NodeGraph::Id;
inline const Id kNone = NodeGraph::None();

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name);
// Integer attribute `name` of `n`, or `fallback` when `n` has none.
int64_t IntAttr(const onnx::NodeProto& n, const char* name, int64_t fallback);
// `n` is a Transpose of one input and output with exactly this perm.
bool IsTranspose(const Node& n, std::initializer_list<int64_t> perm);

// Whether `n` is given input `i` (present, and not left empty as an optional input).
inline bool HasInput(const onnx::NodeProto& n, int i) { return i < n.input_size() && !n.input(i).empty(); }

// Input `input` of `n` when it is a float constant; null otherwise.
const Tensor* FloatConstant(const Graph& g, const onnx::NodeProto& n, int input);

// Input `input` of `n` when it is a float, float16 or bfloat16 constant: a product's weights,
// which graph/half_compute.cc leaves in 16 bits for the kernels to widen; null otherwise.
const Tensor* WeightConstant(const Graph& g, const onnx::NodeProto& n, int input);

// The values of an int64 constant; empty when `name` is none (or not int64).
std::vector<int64_t> Int64Constant(const Graph& g, const std::string& name);

// A Reshape's shape operand whose first two entries may be its input's leading dimensions read at
// run time: a constant, or Concat(axis 0) of constants and dimensions read off the shape of one of
// `same` (values whose leading dimensions are the Reshape input's): [Unsqueeze of] Gather(Shape(t),
// i) or Slice(Shape(t), i, i + 1) at the entry's own axis i < 2, or Slice(Shape(t), 0, -1) for all
// leading ones. Those entries read 0 (Reshape's copy of its input's dimension). The Shape nodes
// read are appended to `shapes`. Empty when the operand is none of these.
std::vector<int64_t> ShapeWithLeadingDims(const Graph& g, const std::string& shape,
                                          const std::vector<std::string>& same, std::vector<NodeGraph::Id>* shapes);

// The element type of a value when the load knows it (graph inputs, value_info, constants).
DataType KnownType(const Graph& g, const std::string& name);

bool IsOp(const Node& n, const char* op);
// `n` is com.microsoft `op` / internal (com.onnxflow) `op`.
bool IsMs(const Node& n, const char* op);
bool IsInternal(const Node& n, const char* op);
// com.microsoft QLinearLeakyRelu / QLinearSigmoid: an element's byte from the same element's, its
// quantization parameters per tensor, so any layout of the tensor computes the same bytes.
bool IsQLinearPointwiseUnary(const Node& n);

// The producer of `value` when exactly `reads` reads of it are all there are (a graph output
// counts as two: NodeGraph::ReadCount); kNone otherwise.
Id ProducerReadBy(const Graph& g, const std::string& value, int reads);

// The producer of `value` when exactly one node reads it (and it is not a graph output); kNone otherwise.
Id SoleReaderProducer(const Graph& g, const std::string& value);

// The node reading `value` when it is the value's only reader and holds no subgraphs; kNone otherwise.
Id SoleReader(const Graph& g, const std::string& value);

// The producer of `n`'s first input when `n` is its only reader; kNone otherwise.
Id SoleProducer(const Graph& g, const Node& n);

// A copy of `node` with another proto (the rules' replacement nodes keep domain, opset and subgraphs).
Node WithProto(const Node& node, std::shared_ptr<const onnx::NodeProto> proto);

// A default-domain Cast of `from` to `type` writing `to`, of opset `opset` (the model's), named
// after its output.
Node CastNode(const std::string& from, const std::string& to, DataType type, int opset);

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

// `from` (a Conv, Gemm, MatMul or an internal op) as internal op `op_type` of kOnnxflowDomain with
// the attributes, inputs and outputs of `proto`, which it sets to that op.
Node InternalNode(const Node& from, std::shared_ptr<onnx::NodeProto> proto, const char* op_type);

// The `channels` values of a float constant `t` that scales or shifts each channel of a value of
// rank `rank` (channels on axis 1) by one number, broadcasting without changing the value's shape:
// [C, 1, 1] or [1, C, 1, 1] for an image, or a single number. Empty for any other constant.
std::vector<float> PerChannelValues(const Tensor& t, int64_t rank, int64_t channels);

// Sets attribute `name` of `n` to `value`, replacing it when `n` has it. For ONNX ops a pass
// writes (LayerNormalization's axis, say); an internal op's attributes are its spec's to write.
void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t value);
void SetFloatAttr(onnx::NodeProto* n, const std::string& name, float value);

// Input `input` of `n` when it is a float constant scalar (rank 0 or 1): true, its value in `value`.
bool FloatScalar(const Graph& g, const onnx::NodeProto& n, int input, float* value);

// A float constant scalar near `want` (exports write sqrt(2) as 1.4142135 or 1.41421356...), or
// `want` rounded to float16 or bfloat16 (a half model's constants, widened by ComputeHalfInFloat).
bool ConstantNear(const Graph& g, const onnx::NodeProto& n, int input, float want);

// The operand of two-input node `n` (op `op`, opset 7 on) that is not the constant `want` (on
// either side when `either_side`); empty when `n` is not that.
std::string OtherThanConstant(const Graph& g, const Node& n, const char* op, float want, bool either_side);

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

}  // namespace onnxflow::graph
