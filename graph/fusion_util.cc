#include "graph/fusion_util.h"

#include <algorithm>
#include <cmath>

#include "ops/framework/activation.h"
#include "ops/framework/domains.h"
#include "ops/framework/numeric.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"

namespace onnxflow::graph {

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

int64_t IntAttr(const onnx::NodeProto& n, const char* name, int64_t fallback) {
  const auto* a = Attr(n, name);
  return a != nullptr ? a->i() : fallback;
}

bool IsTranspose(const Node& n, std::initializer_list<int64_t> perm) {
  if (!IsOp(n, "Transpose") || n.proto->input_size() != 1 || n.proto->output_size() != 1) return false;
  const auto* p = Attr(*n.proto, "perm");
  if (p == nullptr || p->ints_size() != static_cast<int>(perm.size())) return false;
  int i = 0;
  for (int64_t v : perm) {
    if (p->ints(i++) != v) return false;
  }
  return true;
}

const Tensor* FloatConstant(const Graph& g, const onnx::NodeProto& n, int input) {
  if (input >= n.input_size() || n.input(input).empty()) return nullptr;
  auto it = g.constants.find(n.input(input));
  return it != g.constants.end() && it->second.dtype() == DataType::kFloat ? &it->second : nullptr;
}

const Tensor* WeightConstant(const Graph& g, const onnx::NodeProto& n, int input) {
  if (input >= n.input_size() || n.input(input).empty()) return nullptr;
  auto it = g.constants.find(n.input(input));
  if (it == g.constants.end()) return nullptr;
  const DataType t = it->second.dtype();
  return t == DataType::kFloat || t == DataType::kFloat16 || t == DataType::kBFloat16 ? &it->second : nullptr;
}

std::vector<int64_t> Int64Constant(const Graph& g, const std::string& name) {
  auto c = g.constants.find(name);
  if (c == g.constants.end() || c->second.dtype() != DataType::kInt64) return {};
  const int64_t* d = c->second.data<int64_t>();
  return std::vector<int64_t>(d, d + c->second.size());
}

namespace {

// `value` is dimension `axis` of a tensor in `same`, or (axis -1) all but its last, read at run
// time: [Unsqueeze of] Gather(Shape(t), axis) or Slice(Shape(t), axis, axis + 1), or Slice(Shape(t),
// 0, -1). The Shape node goes to `shapes`.
bool DimsOf(const Graph& g, const std::string& value, int64_t axis, const std::vector<std::string>& same,
            std::vector<NodeGraph::Id>* shapes) {
  NodeGraph::Id n = g.nodes.Producer(value);
  if (n != NodeGraph::None() && IsOp(g.nodes[n], "Unsqueeze") && axis >= 0) {
    n = g.nodes.Producer(g.nodes[n].proto->input(0));
  }
  if (n == NodeGraph::None()) return false;
  const auto& op = *g.nodes[n].proto;
  std::vector<int64_t> want_begin = {axis}, want_end = {axis + 1};
  if (axis < 0) want_begin = {0}, want_end = {-1};
  if (IsOp(g.nodes[n], "Gather") && op.input_size() == 2 && axis >= 0) {
    if (Int64Constant(g, op.input(1)) != want_begin) return false;
    if (const auto* a = Attr(op, "axis"); a != nullptr && a->i() != 0) return false;
  } else if (IsOp(g.nodes[n], "Slice") && g.nodes[n].opset >= 10 && op.input_size() >= 3 && op.input_size() <= 4) {
    if (Int64Constant(g, op.input(1)) != want_begin || Int64Constant(g, op.input(2)) != want_end) return false;
    if (op.input_size() == 4 && Int64Constant(g, op.input(3)) != std::vector<int64_t>{0}) return false;
  } else {
    return false;
  }
  const NodeGraph::Id shape = g.nodes.Producer(op.input(0));
  if (shape == NodeGraph::None() || !IsOp(g.nodes[shape], "Shape") || Attr(*g.nodes[shape].proto, "start") != nullptr ||
      Attr(*g.nodes[shape].proto, "end") != nullptr) {
    return false;
  }
  for (const std::string& t : same) {
    if (g.nodes[shape].proto->input(0) == t) {
      shapes->push_back(shape);
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<int64_t> ShapeWithLeadingDims(const Graph& g, const std::string& shape,
                                          const std::vector<std::string>& same, std::vector<NodeGraph::Id>* shapes) {
  std::vector<int64_t> entries = Int64Constant(g, shape);
  if (!entries.empty()) return entries;
  const NodeGraph::Id c = g.nodes.Producer(shape);
  if (c == NodeGraph::None() || !IsOp(g.nodes[c], "Concat")) return {};
  const auto* axis = Attr(*g.nodes[c].proto, "axis");
  if (axis == nullptr || axis->i() != 0) return {};
  for (const std::string& piece : g.nodes[c].proto->input()) {
    const std::vector<int64_t> values = Int64Constant(g, piece);
    if (!values.empty()) {
      entries.insert(entries.end(), values.begin(), values.end());
    } else if (entries.empty() && DimsOf(g, piece, -1, same, shapes)) {
      // All leading dimensions, whatever their number: two, or a rank the op after the
      // Reshape refuses whether the pattern is fused or not.
      entries = {0, 0};
    } else if (entries.size() < 2 && DimsOf(g, piece, static_cast<int64_t>(entries.size()), same, shapes)) {
      entries.push_back(0);
    } else {
      return {};
    }
  }
  return entries;
}

DataType KnownType(const Graph& g, const std::string& name) {
  if (auto c = g.constants.find(name); c != g.constants.end()) return c->second.dtype();
  auto t = g.known_types.find(name);
  return t != g.known_types.end() ? t->second : DataType::kUndefined;
}

bool IsOp(const Node& n, const char* op) { return n.domain.empty() && n.op_type() == op; }
bool IsMs(const Node& n, const char* op) { return n.domain == kMsDomain && n.op_type() == op; }
bool IsInternal(const Node& n, const char* op) { return n.domain == kOnnxflowDomain && n.op_type() == op; }
bool IsQLinearPointwiseUnary(const Node& n) { return IsMs(n, "QLinearLeakyRelu") || IsMs(n, "QLinearSigmoid"); }

Id ProducerReadBy(const Graph& g, const std::string& value, int reads) {
  return g.nodes.ReadCount(value) == reads ? g.nodes.Producer(value) : kNone;
}

Id SoleReaderProducer(const Graph& g, const std::string& value) { return ProducerReadBy(g, value, 1); }

Id SoleReader(const Graph& g, const std::string& value) {
  if (g.nodes.ReadCount(value) != 1) return kNone;
  const Id reader = g.nodes.Readers(value).front();
  return g.nodes[reader].subgraphs.empty() ? reader : kNone;
}

Id SoleProducer(const Graph& g, const Node& n) {
  return n.proto->input_size() == 0 ? kNone : SoleReaderProducer(g, n.proto->input(0));
}

Node WithProto(const Node& node, std::shared_ptr<const onnx::NodeProto> proto) {
  Node copy = node;
  copy.proto = std::move(proto);
  return copy;
}

Node CastNode(const std::string& from, const std::string& to, DataType type, int opset) {
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_op_type("Cast");
  proto->set_name(to + "/cast");
  proto->add_input(from);
  proto->add_output(to);
  SetIntAttr(proto.get(), "to", static_cast<int64_t>(type));
  Node node;
  node.proto = std::move(proto);
  node.opset = opset;
  return node;
}

NameSet::NameSet(const Graph& g) { Collect(g); }

void NameSet::Collect(const Graph& g) {
  for (const auto& [name, tensor] : g.constants) names_.insert(name);
  for (const ValueInfo& v : g.inputs) names_.insert(v.name);
  for (const Node& n : g.nodes) {
    for (const auto& v : n.proto->input()) names_.insert(v);
    for (const auto& v : n.proto->output()) names_.insert(v);
    for (const auto& [attribute, sub] : n.subgraphs) Collect(*sub);
  }
}

std::string NameSet::Fresh(const std::string& base) {
  std::string name = base;
  for (int k = 1; names_.count(name) != 0; ++k) name = base + "#" + std::to_string(k);
  names_.insert(name);
  return name;
}

bool IsFloatProduct(const Graph& g, const Node& producer) {
  DataType type = DataType::kUndefined;
  for (int k = 0; k < std::min(2, producer.proto->input_size()) && type == DataType::kUndefined; ++k) {
    type = KnownType(g, producer.proto->input(k));
  }
  return type == DataType::kFloat;
}

std::vector<float> PerChannelValues(const Tensor& t, int64_t rank, int64_t channels) {
  if (t.dtype() != DataType::kFloat || t.rank() > rank || rank < 2) return {};
  const int64_t channel_axis = 1 - (rank - t.rank());  // axis 1 of the value, in t's axes
  for (int64_t a = 0; a < t.rank(); ++a) {
    if (t.dim(a) != 1 && !(a == channel_axis && t.dim(a) == channels)) return {};
  }
  const float* v = t.data<float>();
  if (t.size() == 1) return std::vector<float>(static_cast<size_t>(channels), v[0]);
  return std::vector<float>(v, v + channels);
}

bool EpilogueOf(const Graph& g, const Node& act, FusedActivationSpec* spec) {
  const auto& a = *act.proto;
  // ONNX Runtime saves x * Sigmoid(x) after a product as com.microsoft QuickGelu with alpha 1
  // (YOLO's SiLU, 57 of them in YOLOv8n at the extended level): the epilogue's Swish. Other alphas
  // (CLIP's 1.702) keep the op's kernel.
  if (IsMs(act, "QuickGelu")) {
    const auto* alpha = Attr(a, "alpha");
    if (a.input_size() != 1 || a.output_size() != 1 || alpha == nullptr || alpha->f() != 1.0f) return false;
    return FusedActivationSpec::From(ActOp::kSwish, ActParams{1.0f}, spec);
  }
  const ActivationOpDef* def = act.domain.empty() ? FindActivationOp(a.op_type()) : nullptr;
  if (def == nullptr || act.opset < def->since) return false;
  ActParams p = ReadActParams(*def, [&](const char* name, float fallback) {
    const auto* attr = Attr(a, name);
    return attr != nullptr ? attr->f() : fallback;
  });
  if (def->op == ActOp::kClip && act.opset >= 11) {  // the bounds are inputs, constants here
    for (int k = 1; k <= 2; ++k) {
      if (k >= a.input_size() || a.input(k).empty()) continue;
      const Tensor* bound = FloatConstant(g, a, k);
      if (bound == nullptr || bound->size() != 1) return false;
      (k == 1 ? p.alpha : p.beta) = bound->data<float>()[0];
    }
  }
  // The ONNX Swish op (opset 24) keeps its own kernel, as before the vocabulary: only the
  // written-out x * Sigmoid(x) becomes an epilogue (FuseSwish).
  // Nor does ONNX's Gelu (opset 20): its kernel keeps the tail precision of the erfc form; the
  // epilogue's erf form serves the written-out GELU (FuseGelu).
  return def->op != ActOp::kSwish && def->op != ActOp::kGelu && FusedActivationSpec::From(def->op, p, spec);
}

bool IsEpilogueActivation(const Graph& g, const Node& act) {
  FusedActivationSpec spec;
  return EpilogueOf(g, act, &spec);
}

bool AddEpilogueActivation(const Graph& g, const Node& act, onnx::NodeProto* node) {
  FusedActivationSpec spec;
  if (!EpilogueOf(g, act, &spec)) return false;
  spec.WriteTo(*node);
  return true;
}

bool HasEpilogue(const Node& fused) {
  auto spec = FusedActivationSpec::Parse(KernelInfo(*fused.proto, fused.opset, {}, {}, {}));
  return !spec.ok() || spec->activation.kind != Activation::kNone;
}

Node InternalNode(const Node& from, std::shared_ptr<onnx::NodeProto> proto, const char* op_type) {
  proto->set_op_type(op_type);
  proto->set_domain(kOnnxflowDomain);
  Node node = WithProto(from, std::move(proto));
  node.domain = kOnnxflowDomain;
  node.opset = internal_ops::kVersion;
  return node;
}

void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t value) { SetAttribute(*n, name, value); }

void SetFloatAttr(onnx::NodeProto* n, const std::string& name, float value) { SetAttribute(*n, name, value); }

bool FloatScalar(const Graph& g, const onnx::NodeProto& n, int input, float* value) {
  const Tensor* c = FloatConstant(g, n, input);
  if (c == nullptr || c->size() != 1 || c->rank() > 1) return false;
  *value = c->data<float>()[0];
  return true;
}

// GPT-2's 0.044715 is 0.0447082 in half, its sqrt(2/pi) 0.7978516.
bool ConstantNear(const Graph& g, const onnx::NodeProto& n, int input, float want) {
  float v = 0;
  if (!FloatScalar(g, n, input, &v)) return false;
  return std::fabs(v - want) <= 1e-6f * std::fabs(want) || v == HalfToFloat(FloatToHalf(want)) ||
         v == BFloat16ToFloat(FloatToBFloat16(want));
}

std::string OtherThanConstant(const Graph& g, const Node& n, const char* op, float want, bool either_side) {
  const auto& p = *n.proto;
  if (!IsOp(n, op) || n.opset < 7 || p.input_size() != 2 || p.output_size() != 1) return "";
  if (ConstantNear(g, p, 1, want)) return p.input(0);
  if (either_side && ConstantNear(g, p, 0, want)) return p.input(1);
  return "";
}

}  // namespace onnxflow::graph
