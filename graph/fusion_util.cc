#include "graph/fusion_util.h"

#include <algorithm>

#include "ops/framework/activation.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"

namespace onnxflow::graph {

Uses CountUses(const Graph& g) {
  Uses u;
  for (size_t i = 0; i < g.nodes.size(); ++i) {
    const Node& n = g.nodes[i];
    for (const auto& in : n.proto->input()) ++u.readers[in];
    for (const auto& in : n.implicit_inputs) ++u.readers[in];
    for (const auto& out : n.proto->output()) u.producer[out] = static_cast<int>(i);
  }
  for (const auto& out : g.outputs) u.readers[out.name] += 2;  // never fuse a graph output away
  return u;
}

const onnx::AttributeProto* Attr(const onnx::NodeProto& n, const std::string& name) {
  for (const auto& a : n.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

const Tensor* FloatConstant(const Graph& g, const onnx::NodeProto& n, int input) {
  if (input >= n.input_size() || n.input(input).empty()) return nullptr;
  auto it = g.constants.find(n.input(input));
  return it != g.constants.end() && it->second.dtype() == DataType::kFloat ? &it->second : nullptr;
}

DataType KnownType(const Graph& g, const std::string& name) {
  if (auto c = g.constants.find(name); c != g.constants.end()) return c->second.dtype();
  auto t = g.known_types.find(name);
  return t != g.known_types.end() ? t->second : DataType::kUndefined;
}

bool IsOp(const Node& n, const char* op) { return n.domain.empty() && n.op_type() == op; }

int ProducerReadBy(const Uses& u, const std::string& value, int readers) {
  auto p = u.producer.find(value);
  auto r = u.readers.find(value);
  return p == u.producer.end() || r == u.readers.end() || r->second != readers ? -1 : p->second;
}

int SoleReaderProducer(const Uses& u, const std::string& value) { return ProducerReadBy(u, value, 1); }

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

int SoleReaderAfter(const Graph& g, const Uses& u, const std::string& value, size_t from) {
  auto r = u.readers.find(value);
  if (r == u.readers.end() || r->second != 1) return -1;
  for (size_t i = from + 1; i < g.nodes.size(); ++i) {
    for (const auto& in : g.nodes[i].proto->input()) {
      if (in == value) return g.nodes[i].subgraphs.empty() ? static_cast<int>(i) : -1;
    }
  }
  return -1;
}

int SoleProducer(const Graph& g, const Uses& u, const Node& n) {
  return n.proto->input_size() == 0 ? -1 : SoleReaderProducer(u, n.proto->input(0));
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

void MakeInternal(Node* node, onnx::NodeProto* proto, const char* op_type) {
  proto->set_op_type(op_type);
  proto->set_domain(kOnnxflowDomain);
  node->domain = kOnnxflowDomain;
  node->opset = internal_ops::kVersion;
}

void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t value) { SetAttribute(*n, name, value); }

void SetFloatAttr(onnx::NodeProto* n, const std::string& name, float value) { SetAttribute(*n, name, value); }

void SetStringAttr(onnx::NodeProto* n, const std::string& name, const std::string& value) {
  SetAttribute(*n, name, value);
}

void Apply(Graph* g, FusionRule rule) {
  std::vector<bool> removed(g->nodes.size(), false);
  bool any = false;
  Uses u = CountUses(*g);
  for (size_t i = 0; i < g->nodes.size(); ++i) any |= rule(g, u, i, &removed);
  if (!any) return;
  std::vector<Node> kept;
  for (size_t i = 0; i < g->nodes.size(); ++i) {
    if (!removed[i]) kept.push_back(std::move(g->nodes[i]));
  }
  g->nodes = std::move(kept);
}

}  // namespace onnxflow::graph
