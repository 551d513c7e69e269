#include "graph/dynamic_quant_fusion.h"

#include <memory>
#include <optional>
#include <string>

#include "graph/fusion_util.h"
#include "graph/qdq_util.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/registry.h"

namespace onnxflow::graph {
namespace {

const Tensor* ConstantTensor(const Graph& g, const std::string& name) {
  auto it = g.constants.find(name);
  return it == g.constants.end() ? nullptr : &it->second;
}

}  // namespace

std::optional<Patch> FuseDynamicQuantMatMul(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& mm = r[index];
  const auto& p = *mm.proto;
  if (!IsOp(mm, "MatMulInteger") || p.input_size() < 3 || p.output_size() != 1) return std::nullopt;
  // W, and its zero point when given, constant 8-bit; a 2-D W (one column scale per output).
  const Tensor* w = ConstantTensor(g, p.input(1));
  if (w == nullptr || !Is8Bit(w->dtype()) || w->rank() != 2) return std::nullopt;
  const Tensor* wz = p.input_size() > 3 && !p.input(3).empty() ? ConstantTensor(g, p.input(3)) : nullptr;
  if (p.input_size() > 3 && !p.input(3).empty() && (wz == nullptr || wz->dtype() != w->dtype())) return std::nullopt;
  // x_q and x_zero from one DynamicQuantizeLinear.
  const Id dql_index = g.nodes.Producer(p.input(0));
  if (dql_index == kNone) return std::nullopt;
  const Node& dql = r[dql_index];
  if (!IsOp(dql, "DynamicQuantizeLinear") || dql.proto->output_size() != 3 || dql.proto->output(0) != p.input(0) ||
      dql.proto->output(2) != p.input(2)) {
    return std::nullopt;
  }
  // MatMulInteger -> Cast(float) -> Mul(x_scale * w_scale).
  const Id cast_index = SoleReader(g, p.output(0));
  if (cast_index == kNone) return std::nullopt;
  const Node& cast = r[cast_index];
  const auto* to = Attr(*cast.proto, "to");
  if (!IsOp(cast, "Cast") || to == nullptr || to->i() != static_cast<int64_t>(onnx::TensorProto::FLOAT)) {
    return std::nullopt;
  }
  const Id mul_index = SoleReader(g, cast.proto->output(0));
  if (mul_index == kNone) return std::nullopt;
  const Node& mul = r[mul_index];
  if (!IsOp(mul, "Mul") || mul.proto->input_size() != 2) return std::nullopt;
  const int cast_side = mul.proto->input(0) == cast.proto->output(0) ? 0 : 1;
  const Id scale_index = g.nodes.Producer(mul.proto->input(1 - cast_side));
  if (scale_index == kNone) return std::nullopt;
  const Node& scale_mul = r[scale_index];
  if (!IsOp(scale_mul, "Mul") || scale_mul.proto->input_size() != 2 ||
      SoleReader(g, scale_mul.proto->output(0)) != mul_index) {
    return std::nullopt;
  }
  const int xs_side = scale_mul.proto->input(0) == dql.proto->output(1) ? 0
                      : scale_mul.proto->input(1) == dql.proto->output(1) ? 1
                                                                           : -1;
  if (xs_side < 0) return std::nullopt;
  const std::string& w_scale_name = scale_mul.proto->input(1 - xs_side);
  const Tensor* w_scale = ConstantTensor(g, w_scale_name);
  const int64_t n = w->dim(1);
  if (w_scale == nullptr || w_scale->dtype() != DataType::kFloat ||
      !(w_scale->size() == 1 || (w_scale->rank() == 1 && w_scale->size() == n))) {
    return std::nullopt;
  }
  if (wz != nullptr && !(wz->size() == 1 || (wz->rank() == 1 && wz->size() == n))) return std::nullopt;
  // An Add of a constant float [N] bias, when it follows.
  const std::string& output = mul.proto->output(0);
  std::string bias_name;
  const Id add_index = SoleReader(g, output);
  if (add_index != kNone && IsOp(r[add_index], "Add") && r[add_index].proto->input_size() == 2) {
    const auto& add = *r[add_index].proto;
    const int other = add.input(0) == output ? 1 : 0;
    const Tensor* bias = ConstantTensor(g, add.input(other));
    if (bias != nullptr && bias->dtype() == DataType::kFloat && bias->rank() == 1 && bias->size() == n) {
      bias_name = add.input(other);
    }
  }

  auto node = std::make_shared<onnx::NodeProto>();
  node->set_name(p.name().empty() ? "DynamicQuantizeMatMul" : p.name() + "/DynamicQuantizeMatMul");
  node->set_op_type("DynamicQuantizeMatMul");
  node->set_domain(kMsDomain);
  node->add_input(dql.proto->input(0));
  node->add_input(p.input(1));
  node->add_input(w_scale_name);
  node->add_input(wz != nullptr ? p.input(3) : std::string());
  if (!bias_name.empty()) node->add_input(bias_name);
  const Id last = bias_name.empty() ? mul_index : add_index;
  node->add_output(r[last].proto->output(0));
  Node fused = WithProto(mm, std::move(node));
  fused.domain = kMsDomain;
  fused.opset = 1;
  Patch patch{{index, cast_index, mul_index, scale_index}, {std::move(fused)}, {}};
  if (!bias_name.empty()) patch.replaced.push_back(add_index);
  // The DynamicQuantizeLinear goes when nothing else reads it (the fused node reads x itself).
  const auto& d = *dql.proto;
  if (g.nodes.ReadCount(d.output(0)) == 1 && g.nodes.ReadCount(d.output(1)) == 1 && g.nodes.ReadCount(d.output(2)) == 1) {
    patch.replaced.push_back(dql_index);
  }
  return patch;
}

namespace {

// `value` holds one float at every run: a float constant of one element, or the product of
// DynamicQuantizeLinear's scale (a scalar) and such a constant.
bool OneFloat(const Graph& g, const std::string& value) {
  if (const Tensor* c = ConstantTensor(g, value); c != nullptr) return c->dtype() == DataType::kFloat && c->size() == 1;
  const Id p = g.nodes.Producer(value);
  if (p == kNone || !IsOp(g.nodes[p], "Mul") || g.nodes[p].proto->input_size() != 2) return false;
  const auto& m = *g.nodes[p].proto;
  for (int i = 0; i < 2; ++i) {
    const Id q = g.nodes.Producer(m.input(i));
    const Tensor* c = ConstantTensor(g, m.input(1 - i));
    if (q != kNone && IsOp(g.nodes[q], "DynamicQuantizeLinear") && g.nodes[q].proto->output_size() > 1 &&
        g.nodes[q].proto->output(1) == m.input(i) && c != nullptr && c->dtype() == DataType::kFloat && c->size() == 1) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<Patch> FuseConvIntegerTail(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& cast = r[index];
  const auto* to = Attr(*cast.proto, "to");
  if (!IsOp(cast, "Cast") || to == nullptr || to->i() != static_cast<int64_t>(onnx::TensorProto::FLOAT)) {
    return std::nullopt;
  }
  const Id conv = SoleReaderProducer(g, cast.proto->input(0));
  if (conv == kNone || !IsOp(r[conv], "ConvInteger") || r[conv].proto->input_size() < 2) return std::nullopt;
  const Tensor* w = ConstantTensor(g, r[conv].proto->input(1));
  if (w == nullptr || w->rank() < 3) return std::nullopt;
  const int64_t rank = w->rank(), channels = w->dim(0);
  // Cast -> Mul(one float).
  const Id mul = SoleReader(g, cast.proto->output(0));
  if (mul == kNone || !IsOp(r[mul], "Mul") || r[mul].opset < 7 || r[mul].proto->input_size() != 2) return std::nullopt;
  const auto& m = *r[mul].proto;
  const std::string& scale = m.input(0) == cast.proto->output(0) ? m.input(1) : m.input(0);
  if (m.input(0) == m.input(1) || !OneFloat(g, scale)) return std::nullopt;
  std::vector<Id> nodes = {index, mul};
  std::string output = m.output(0);
  // [-> Add(a per-channel float constant)]
  std::vector<float> bias;
  if (const Id add = SoleReader(g, output); add != kNone && IsOp(r[add], "Add") && r[add].opset >= 7 &&
                                            r[add].proto->input_size() == 2) {
    const auto& a = *r[add].proto;
    const Tensor* b = ConstantTensor(g, a.input(0) == output ? a.input(1) : a.input(0));
    if (b != nullptr) bias = PerChannelValues(*b, rank, channels);
    if (!bias.empty()) {
      nodes.push_back(add);
      output = a.output(0);
    }
  }
  // [-> Relu or Clip (constant bounds: a mobile network's Relu6)], a clamp that keeps the bits.
  std::optional<ActivationSpec> clamp;
  if (const Id act = SoleReader(g, output); act != kNone) {
    FusedActivationSpec spec;
    if (EpilogueOf(g, r[act], &spec) &&
        (spec.activation.kind == Activation::kRelu || spec.activation.kind == Activation::kClip)) {
      clamp = spec.activation;
      nodes.push_back(act);
      output = r[act].proto->output(0);
    }
  }

  Patch patch;
  patch.replaced = nodes;
  auto node = std::make_shared<onnx::NodeProto>();
  node->set_name(r[nodes.back()].proto->name());
  node->add_input(cast.proto->input(0));
  node->add_input(scale);
  if (!bias.empty()) {
    const std::string name = r.FreshName(output + "_bias");
    patch.constants.push_back({name, Tensor::FromVector<float>({channels}, bias)});
    node->add_input(name);
  }
  node->add_output(output);
  if (clamp.has_value()) {
    const bool relu = clamp->kind == Activation::kRelu;
    SetFloatAttr(node.get(), "min", relu ? 0.0f : clamp->alpha);
    if (!relu) SetFloatAttr(node.get(), "max", clamp->beta);
  }
  patch.added.push_back(InternalNode(cast, std::move(node), internal_ops::kDequantizeAccumulator));
  return patch;
}

}  // namespace onnxflow::graph
