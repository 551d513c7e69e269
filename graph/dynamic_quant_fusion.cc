#include "graph/dynamic_quant_fusion.h"

#include <memory>
#include <string>

#include "ops/framework/domains.h"
#include "ops/framework/registry.h"

namespace onnxflow::graph {
namespace {

const Tensor* ConstantTensor(const Graph& g, const std::string& name) {
  auto it = g.constants.find(name);
  return it == g.constants.end() ? nullptr : &it->second;
}

bool Is8Bit(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

}  // namespace

bool FuseDynamicQuantMatMul(Graph* g, Uses& u, size_t index, std::vector<bool>* removed) {
  const Node& mm = g->nodes[index];
  const auto& p = *mm.proto;
  if (!IsOp(mm, "MatMulInteger") || p.input_size() < 3 || p.output_size() != 1) return false;
  // W, and its zero point when given, constant 8-bit; a 2-D W (one column scale per output).
  const Tensor* w = ConstantTensor(*g, p.input(1));
  if (w == nullptr || !Is8Bit(w->dtype()) || w->rank() != 2) return false;
  const Tensor* wz = p.input_size() > 3 && !p.input(3).empty() ? ConstantTensor(*g, p.input(3)) : nullptr;
  if (p.input_size() > 3 && !p.input(3).empty() && (wz == nullptr || wz->dtype() != w->dtype())) return false;
  // x_q and x_zero from one DynamicQuantizeLinear.
  auto prod = u.producer.find(p.input(0));
  if (prod == u.producer.end() || (*removed)[prod->second]) return false;
  const int dql_index = prod->second;
  const Node& dql = g->nodes[dql_index];
  if (!IsOp(dql, "DynamicQuantizeLinear") || dql.proto->output_size() != 3 || dql.proto->output(0) != p.input(0) ||
      dql.proto->output(2) != p.input(2)) {
    return false;
  }
  // MatMulInteger -> Cast(float) -> Mul(x_scale * w_scale).
  const int cast_index = SoleReaderAfter(*g, u, p.output(0), index);
  if (cast_index < 0 || (*removed)[cast_index]) return false;
  const Node& cast = g->nodes[cast_index];
  const auto* to = Attr(*cast.proto, "to");
  if (!IsOp(cast, "Cast") || to == nullptr || to->i() != static_cast<int64_t>(onnx::TensorProto::FLOAT)) return false;
  const int mul_index = SoleReaderAfter(*g, u, cast.proto->output(0), cast_index);
  if (mul_index < 0 || (*removed)[mul_index]) return false;
  const Node& mul = g->nodes[mul_index];
  if (!IsOp(mul, "Mul") || mul.proto->input_size() != 2) return false;
  const int cast_side = mul.proto->input(0) == cast.proto->output(0) ? 0 : 1;
  auto sp = u.producer.find(mul.proto->input(1 - cast_side));
  if (sp == u.producer.end() || (*removed)[sp->second]) return false;
  const int scale_index = sp->second;
  const Node& scale_mul = g->nodes[scale_index];
  if (!IsOp(scale_mul, "Mul") || scale_mul.proto->input_size() != 2 ||
      SoleReaderAfter(*g, u, scale_mul.proto->output(0), scale_index) != mul_index) {
    return false;
  }
  const int xs_side = scale_mul.proto->input(0) == dql.proto->output(1) ? 0
                      : scale_mul.proto->input(1) == dql.proto->output(1) ? 1
                                                                           : -1;
  if (xs_side < 0) return false;
  const std::string& w_scale_name = scale_mul.proto->input(1 - xs_side);
  const Tensor* w_scale = ConstantTensor(*g, w_scale_name);
  const int64_t n = w->dim(1);
  if (w_scale == nullptr || w_scale->dtype() != DataType::kFloat ||
      !(w_scale->size() == 1 || (w_scale->rank() == 1 && w_scale->size() == n))) {
    return false;
  }
  if (wz != nullptr && !(wz->size() == 1 || (wz->rank() == 1 && wz->size() == n))) return false;
  // An Add of a constant float [N] bias, when it follows.
  std::string output = mul.proto->output(0);
  std::string bias_name;
  const int add_index = SoleReaderAfter(*g, u, output, mul_index);
  if (add_index >= 0 && !(*removed)[add_index] && IsOp(g->nodes[add_index], "Add") &&
      g->nodes[add_index].proto->input_size() == 2) {
    const auto& add = *g->nodes[add_index].proto;
    const int other = add.input(0) == output ? 1 : 0;
    const Tensor* bias = ConstantTensor(*g, add.input(other));
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
  const int last = bias_name.empty() ? mul_index : add_index;
  node->add_output(g->nodes[last].proto->output(0));
  Node& fused = g->nodes[index];
  fused.proto = std::move(node);
  fused.domain = kMsDomain;
  fused.opset = 1;
  u.producer[fused.proto->output(0)] = static_cast<int>(index);
  (*removed)[cast_index] = true;
  (*removed)[mul_index] = true;
  (*removed)[scale_index] = true;
  if (!bias_name.empty()) (*removed)[add_index] = true;
  // The DynamicQuantizeLinear goes when nothing else reads it (the fused node reads x itself).
  const auto& d = *dql.proto;
  auto count = [&](const std::string& v) {
    auto it = u.readers.find(v);
    return it == u.readers.end() ? 0 : it->second;
  };
  const bool only_here = count(d.output(0)) == 1 && count(d.output(2)) == 1 && count(d.output(1)) == 1;
  if (only_here) (*removed)[dql_index] = true;
  // x is now read by the fused node as well; the values it no longer reads lose one read each.
  u.readers[d.input(0)] += 1;
  u.readers[d.output(0)] -= 1;
  u.readers[d.output(1)] -= 1;
  u.readers[d.output(2)] -= 1;
  return true;
}

}  // namespace onnxflow::graph
