#include "graph/fusion_util.h"

#include <algorithm>
#include <cfloat>

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

namespace {

// The epilogue attributes for an activation node, or false when it cannot be fused.
bool ActivationAttributes(const Graph& g, const Node& act, std::string* name, float* alpha, float* beta,
                          bool* has_alpha, bool* has_beta) {
  const auto& a = *act.proto;
  *has_alpha = *has_beta = false;
  if (!act.domain.empty()) return false;
  const std::string& op = a.op_type();
  *name = op;
  if (op == "Relu" || op == "Sigmoid" || op == "Tanh") return true;
  if (op == "LeakyRelu") {
    *alpha = Attr(a, "alpha") ? Attr(a, "alpha")->f() : 0.01f;
    *has_alpha = true;
    return true;
  }
  if (op == "HardSigmoid") {
    *alpha = Attr(a, "alpha") ? Attr(a, "alpha")->f() : 0.2f;
    *beta = Attr(a, "beta") ? Attr(a, "beta")->f() : 0.5f;
    *has_alpha = *has_beta = true;
    return true;
  }
  if (op == "Clip") {
    *alpha = -FLT_MAX;
    *beta = FLT_MAX;
    if (act.opset < 11) {
      if (Attr(a, "min")) *alpha = Attr(a, "min")->f();
      if (Attr(a, "max")) *beta = Attr(a, "max")->f();
    } else {
      for (int k = 1; k <= 2; ++k) {
        if (k >= a.input_size() || a.input(k).empty()) continue;
        const Tensor* bound = FloatConstant(g, a, k);
        if (bound == nullptr || bound->size() != 1) return false;
        (k == 1 ? *alpha : *beta) = bound->data<float>()[0];
      }
    }
    *has_alpha = *has_beta = true;
    return true;
  }
  return false;
}

}  // namespace

bool IsEpilogueActivation(const Graph& g, const Node& act) {
  std::string name;
  float alpha = 0, beta = 0;
  bool has_alpha, has_beta;
  return ActivationAttributes(g, act, &name, &alpha, &beta, &has_alpha, &has_beta);
}

bool AddEpilogueActivation(const Graph& g, const Node& act, onnx::NodeProto* node) {
  std::string name;
  float alpha = 0, beta = 0;
  bool has_alpha, has_beta;
  if (!ActivationAttributes(g, act, &name, &alpha, &beta, &has_alpha, &has_beta)) return false;
  SetStringAttr(node, "activation", name);
  if (has_alpha) SetFloatAttr(node, "activation_alpha", alpha);
  if (has_beta) SetFloatAttr(node, "activation_beta", beta);
  return true;
}

namespace {

// The attribute `name` of `n` (its old value kept until the caller sets the new one), or a new one.
onnx::AttributeProto* AttrToSet(onnx::NodeProto* n, const std::string& name, onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto* a = nullptr;
  for (auto& existing : *n->mutable_attribute()) {
    if (existing.name() == name) a = &existing;
  }
  if (a == nullptr) a = n->add_attribute();
  a->set_name(name);
  a->set_type(type);
  return a;
}

}  // namespace

void SetIntAttr(onnx::NodeProto* n, const std::string& name, int64_t value) {
  AttrToSet(n, name, onnx::AttributeProto::INT)->set_i(value);
}

void SetFloatAttr(onnx::NodeProto* n, const std::string& name, float value) {
  AttrToSet(n, name, onnx::AttributeProto::FLOAT)->set_f(value);
}

void SetStringAttr(onnx::NodeProto* n, const std::string& name, const std::string& value) {
  AttrToSet(n, name, onnx::AttributeProto::STRING)->set_s(value);
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
