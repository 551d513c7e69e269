#include "graph/qdq_fusion.h"

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/fusion_util.h"
#include "ops/framework/domains.h"
#include "ops/framework/registry.h"

namespace onnxflow::graph {
namespace {

bool IsQdqOp(const Node& n, const char* op) {
  return (n.domain.empty() || n.domain == kMsDomain) && n.op_type() == op;
}

const Tensor* Constant(const Graph& g, const onnx::NodeProto& n, int input) {
  if (input >= n.input_size() || n.input(input).empty()) return nullptr;
  auto it = g.constants.find(n.input(input));
  return it == g.constants.end() ? nullptr : &it->second;
}

bool Is8Bit(DataType t) { return t == DataType::kUint8 || t == DataType::kInt8; }

float ZeroValue(const Tensor& z, int64_t i) {
  return z.dtype() == DataType::kInt8 ? static_cast<float>(z.data<int8_t>()[i]) : static_cast<float>(z.data<uint8_t>()[i]);
}

// One side of a quantized op: the 8-bit value, its scale and zero point (names of constants).
struct QSide {
  std::string value, scale, zero;
  DataType type = DataType::kUndefined;
  float scale_value = 0, zero_value = 0;
};

// A constant zero point of `type` (0), added to the graph once.
std::string ZeroConstant(Graph* g, DataType type) {
  const std::string name = std::string("onnxflow_qdq_zero_") + DataTypeName(type);
  if (!g->constants.count(name)) {
    g->constants[name] = type == DataType::kInt8 ? Tensor::Scalar<int8_t>(0) : Tensor::Scalar<uint8_t>(0);
    g->known_types[name] = type;
  }
  return name;
}

// Reads the per-tensor constant parameters of a Q or DQ node (inputs 1 and 2) and the 8-bit type
// of its quantized side (`quantized` is its input for DQ, output for Q). False when they are not
// constants with one element, the type is not 8-bit or attributes change the meaning.
bool PerTensorParams(Graph* g, const Node& n, const std::string& quantized, QSide* side) {
  const auto& p = *n.proto;
  if (p.input_size() < 2 || Attr(p, "block_size") != nullptr) return false;
  const Tensor* scale = Constant(*g, p, 1);
  const Tensor* zero = Constant(*g, p, 2);
  if (scale == nullptr || scale->dtype() != DataType::kFloat || scale->size() != 1) return false;
  if (p.input_size() > 2 && !p.input(2).empty() && (zero == nullptr || zero->size() != 1)) return false;
  DataType type = zero != nullptr ? zero->dtype() : KnownType(*g, quantized);
  if (zero == nullptr && IsQdqOp(n, "QuantizeLinear")) {
    const auto* dtype = Attr(p, "output_dtype");
    type = dtype != nullptr ? static_cast<DataType>(dtype->i()) : DataType::kUint8;
  }
  if (!Is8Bit(type)) return false;
  if (const auto* sat = Attr(p, "saturate"); sat != nullptr && sat->i() == 0) return false;
  side->value = quantized;
  side->scale = p.input(1);
  side->zero = zero != nullptr ? p.input(2) : ZeroConstant(g, type);
  side->type = type;
  side->scale_value = scale->data<float>()[0];
  side->zero_value = zero != nullptr ? ZeroValue(*zero, 0) : 0.f;
  return true;
}

// The DequantizeLinear that produces `value` (whatever else reads it), with per-tensor params.
bool DqInput(Graph* g, const Uses& u, const std::vector<bool>& removed, const std::string& value, QSide* side) {
  auto it = u.producer.find(value);
  if (it == u.producer.end() || removed[it->second]) return false;
  const Node& dq = g->nodes[it->second];
  if (!IsQdqOp(dq, "DequantizeLinear") || dq.proto->input_size() < 1) return false;
  return PerTensorParams(g, dq, dq.proto->input(0), side);
}

// A fresh node in place of the op at `index`, writing the Q's output; the Q is removed.
// `attrs` names the attributes of the op that carry over.
void Replace(Graph* g, Uses& u, size_t index, size_t q_index, std::vector<bool>* removed, const char* domain,
             const std::string& op_type, std::vector<std::string> inputs, const std::string& output, int opset,
             const std::vector<std::string>& attrs = {}) {
  Node& node = g->nodes[index];
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_name(node.proto->name());
  proto->set_op_type(op_type);
  proto->set_domain(domain);
  for (auto& in : inputs) proto->add_input(in);
  proto->add_output(output);
  for (const auto& a : node.proto->attribute()) {
    for (const auto& name : attrs) {
      if (a.name() == name) *proto->add_attribute() = a;
    }
  }
  node.proto = std::move(proto);
  node.domain = domain;
  node.opset = opset;
  u.producer[output] = static_cast<int>(index);
  (*removed)[q_index] = true;
}

// The constant weight side of a Conv or MatMul: per-tensor, or per output channel on `axis`.
bool WeightInput(Graph* g, const Uses& u, const std::vector<bool>& removed, const std::string& value, int64_t axis,
                 QSide* side, std::vector<float>* scales) {
  auto it = u.producer.find(value);
  if (it == u.producer.end() || removed[it->second]) return false;
  const Node& dq = g->nodes[it->second];
  if (!IsQdqOp(dq, "DequantizeLinear")) return false;
  const auto& p = *dq.proto;
  const Tensor* w = Constant(*g, p, 0);
  const Tensor* scale = Constant(*g, p, 1);
  const Tensor* zero = Constant(*g, p, 2);
  if (w == nullptr || !Is8Bit(w->dtype()) || scale == nullptr || scale->dtype() != DataType::kFloat) return false;
  if (Attr(p, "block_size") != nullptr) return false;
  if (p.input_size() > 2 && !p.input(2).empty() && (zero == nullptr || zero->dtype() != w->dtype())) return false;
  if (scale->size() != 1) {
    int64_t dq_axis = Attr(p, "axis") != nullptr ? Attr(p, "axis")->i() : 1;
    if (dq_axis < 0) dq_axis += w->rank();
    if (dq_axis != axis || scale->rank() != 1 || scale->size() != w->dim(axis)) return false;
    if (zero != nullptr && zero->size() != scale->size()) return false;
  } else if (zero != nullptr && zero->size() != 1) {
    return false;
  }
  side->value = p.input(0);
  side->scale = p.input(1);
  side->type = w->dtype();
  if (zero != nullptr) {
    side->zero = p.input(2);
  } else if (scale->size() == 1) {
    side->zero = ZeroConstant(g, w->dtype());
  } else {
    const std::string name = p.input(0) + "_onnxflow_zero";
    g->constants[name] = w->dtype() == DataType::kInt8
                             ? Tensor::FromVector<int8_t>({scale->size()}, std::vector<int8_t>(scale->size(), 0))
                             : Tensor::FromVector<uint8_t>({scale->size()}, std::vector<uint8_t>(scale->size(), 0));
    g->known_types[name] = w->dtype();
    side->zero = name;
  }
  scales->assign(scale->data<float>(), scale->data<float>() + scale->size());
  return true;
}

// A float bias for a Conv (a float constant or DQ of a constant) as int32 in the accumulator's
// scale x_scale * w_scale[m]; the name of a new constant, or "" when there is none to be had.
std::string QuantizedBias(Graph* g, const Uses& u, const std::string& value, float x_scale,
                          const std::vector<float>& w_scales, int64_t channels) {
  std::vector<float> bias;
  if (const auto c = g->constants.find(value); c != g->constants.end()) {
    if (c->second.dtype() != DataType::kFloat) return "";
    bias.assign(c->second.data<float>(), c->second.data<float>() + c->second.size());
  } else {
    auto it = u.producer.find(value);
    if (it == u.producer.end()) return "";
    const Node& dq = g->nodes[it->second];
    if (!IsQdqOp(dq, "DequantizeLinear")) return "";
    const Tensor* b = Constant(*g, *dq.proto, 0);
    const Tensor* s = Constant(*g, *dq.proto, 1);
    const Tensor* z = Constant(*g, *dq.proto, 2);
    if (b == nullptr || b->dtype() != DataType::kInt32 || s == nullptr || s->dtype() != DataType::kFloat) return "";
    if (s->size() != 1 && s->size() != b->size()) return "";
    for (int64_t i = 0; i < b->size(); ++i) {
      const float zi = z == nullptr ? 0.f : static_cast<float>(z->data<int32_t>()[z->size() == 1 ? 0 : i]);
      bias.push_back((static_cast<float>(b->data<int32_t>()[i]) - zi) * s->data<float>()[s->size() == 1 ? 0 : i]);
    }
  }
  if (static_cast<int64_t>(bias.size()) != channels) return "";
  std::vector<int32_t> q(channels);
  for (int64_t m = 0; m < channels; ++m) {
    const double s = static_cast<double>(x_scale) * w_scales[w_scales.size() == 1 ? 0 : m];
    const double v = std::nearbyint(bias[m] / s);
    if (!(std::abs(v) < 2147483647.0)) return "";
    q[m] = static_cast<int32_t>(v);
  }
  const std::string name = value + "_onnxflow_int32";
  g->constants[name] = Tensor::FromVector<int32_t>({channels}, q);
  g->known_types[name] = DataType::kInt32;
  return name;
}

bool FuseConv(Graph* g, Uses& u, size_t index, size_t q_index, const QSide& y, std::vector<bool>* removed) {
  const auto& c = *g->nodes[index].proto;
  if (c.input_size() < 2) return false;
  QSide x, w;
  std::vector<float> w_scales;
  if (!DqInput(g, u, *removed, c.input(0), &x) || !WeightInput(g, u, *removed, c.input(1), 0, &w, &w_scales)) {
    return false;
  }
  const int64_t channels = g->constants.at(w.value).dim(0);
  std::string bias;
  if (c.input_size() > 2 && !c.input(2).empty()) {
    bias = QuantizedBias(g, u, c.input(2), x.scale_value, w_scales, channels);
    if (bias.empty()) return false;
  }
  std::vector<std::string> in = {x.value, x.scale, x.zero, w.value, w.scale, w.zero, y.scale, y.zero};
  if (!bias.empty()) in.push_back(bias);
  Replace(g, u, index, q_index, removed, kOnnxDomain, "QLinearConv", in, y.value, g->nodes[index].opset,
          {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  return true;
}

bool FuseMatMul(Graph* g, Uses& u, size_t index, size_t q_index, const QSide& y, std::vector<bool>* removed) {
  const auto& m = *g->nodes[index].proto;
  if (m.input_size() != 2) return false;
  QSide a, b;
  std::vector<float> b_scales;
  if (!DqInput(g, u, *removed, m.input(0), &a)) return false;
  const bool b_const = [&] {
    auto it = u.producer.find(m.input(1));
    if (it == u.producer.end()) return false;
    const Tensor* w = Constant(*g, *g->nodes[it->second].proto, 0);
    return w != nullptr && w->rank() == 2;
  }();
  // QLinearMatMul takes b's scale per tensor or, for a 2-D b, per column (DQ axis 1).
  if (!(b_const ? WeightInput(g, u, *removed, m.input(1), 1, &b, &b_scales) : DqInput(g, u, *removed, m.input(1), &b))) {
    return false;
  }
  Replace(g, u, index, q_index, removed, kOnnxDomain, "QLinearMatMul",
          {a.value, a.scale, a.zero, b.value, b.scale, b.zero, y.scale, y.zero}, y.value, g->nodes[index].opset);
  return true;
}

// A com.microsoft QLinear op over per-tensor DQ inputs, all of y's type.
bool FuseMs(Graph* g, Uses& u, size_t index, size_t q_index, const QSide& y, std::vector<bool>* removed) {
  const Node& node = g->nodes[index];
  const onnx::NodeProto op = *node.proto;
  const std::string& t = op.op_type();
  std::vector<QSide> xs(op.input_size());
  const int data_inputs = t == "Concat" ? op.input_size() : (t == "Add" || t == "Mul") ? 2 : 1;
  if (op.input_size() < data_inputs || data_inputs == 0) return false;
  for (int i = 0; i < data_inputs; ++i) {
    if (!DqInput(g, u, *removed, op.input(i), &xs[i]) || xs[i].type != y.type) return false;
  }
  std::vector<std::string> in;
  std::string fused;
  std::vector<std::string> attrs;
  if (t == "Concat") {
    fused = "QLinearConcat";
    in = {y.scale, y.zero};
    for (int i = 0; i < data_inputs; ++i) in.insert(in.end(), {xs[i].value, xs[i].scale, xs[i].zero});
    attrs = {"axis"};
  } else if (t == "Add" || t == "Mul") {
    if (node.opset < 7) return false;
    fused = t == "Add" ? "QLinearAdd" : "QLinearMul";
    in = {xs[0].value, xs[0].scale, xs[0].zero, xs[1].value, xs[1].scale, xs[1].zero, y.scale, y.zero};
  } else {
    if (op.input_size() != 1) return false;
    if (t == "AveragePool") {
      if (const auto* d = Attr(op, "dilations"); d != nullptr) {
        for (int64_t v : d->ints()) if (v != 1) return false;
      }
      attrs = {"auto_pad", "ceil_mode", "count_include_pad", "kernel_shape", "pads", "strides"};
    }
    if (t == "LeakyRelu") attrs = {"alpha"};
    fused = "QLinear" + t;
    in = {xs[0].value, xs[0].scale, xs[0].zero, y.scale, y.zero};
  }
  Replace(g, u, index, q_index, removed, kMsDomain, fused, in, y.value, 1, attrs);
  return true;
}

// DQ -> op -> Q with equal parameters on both sides: the op on the 8-bit values is exact.
bool PassThrough(Graph* g, Uses& u, size_t index, size_t q_index, const QSide& y, std::vector<bool>* removed) {
  Node& node = g->nodes[index];
  const std::string& t = node.op_type();
  QSide x;
  if (!DqInput(g, u, *removed, node.proto->input(0), &x)) return false;
  if (x.type != y.type || x.scale_value != y.scale_value || x.zero_value != y.zero_value) return false;
  // 8-bit inputs: MaxPool from 12, Max from 12; Reshape and Transpose take any type.
  if ((t == "MaxPool" || t == "Relu") && node.opset < 12) return false;
  if (t == "MaxPool" && node.proto->output_size() != 1) return false;
  auto proto = std::make_shared<onnx::NodeProto>(*node.proto);
  if (t == "Relu") {
    proto->set_op_type("Max");
    proto->add_input(x.zero);
  }
  proto->set_input(0, x.value);
  proto->set_output(0, y.value);
  node.proto = std::move(proto);
  u.producer[y.value] = static_cast<int>(index);
  (*removed)[q_index] = true;
  return true;
}

bool FuseAtQuantize(Graph* g, Uses& u, size_t q_index, std::vector<bool>* removed) {
  const Node& q = g->nodes[q_index];
  if (!IsQdqOp(q, "QuantizeLinear") || q.proto->output_size() != 1 || q.proto->input_size() < 2) return false;
  const int p = SoleReaderProducer(u, q.proto->input(0));
  if (p < 0 || (*removed)[p]) return false;
  const Node& op = g->nodes[p];
  if (!op.domain.empty() || op.proto->output_size() != 1 || op.proto->input_size() < 1) return false;
  QSide y;
  if (!PerTensorParams(g, q, q.proto->output(0), &y)) return false;
  const std::string& t = op.op_type();
  if (t == "Relu" && y.zero_value == (y.type == DataType::kInt8 ? -128.0f : 0.0f)) {
    // Relu -> Q whose zero point is its type's least value: the quantization clamps at zero
    // already and the Relu changes nothing (ONNX Runtime's quantizer leaves such Relus out). Q
    // reads the Relu's input, and fuses with what produces it when it can.
    auto proto = std::make_shared<onnx::NodeProto>(*q.proto);
    proto->set_input(0, op.proto->input(0));
    g->nodes[q_index].proto = std::move(proto);
    (*removed)[p] = true;
    FuseAtQuantize(g, u, q_index, removed);
    return true;
  }
  if (t == "Conv") return FuseConv(g, u, p, q_index, y, removed);
  if (t == "MatMul") return FuseMatMul(g, u, p, q_index, y, removed);
  if (t == "Add" || t == "Mul" || t == "Concat" || t == "GlobalAveragePool" || t == "AveragePool" ||
      t == "Sigmoid" || t == "LeakyRelu") {
    return FuseMs(g, u, p, q_index, y, removed);
  }
  if (t == "MaxPool" || t == "Relu" || t == "Reshape" || t == "Transpose") {
    return PassThrough(g, u, p, q_index, y, removed);
  }
  return false;
}

// DequantizeLinear nodes no node reads any more (their fused readers read the 8-bit value):
// dropped now, so that constant folding does not make float copies of the weights.
void DropUnreadDequantize(Graph* g) {
  const Uses u = CountUses(*g);
  std::vector<Node> kept;
  kept.reserve(g->nodes.size());
  for (Node& n : g->nodes) {
    if (IsQdqOp(n, "DequantizeLinear") && n.proto->output_size() == 1 && u.readers.count(n.proto->output(0)) == 0) {
      continue;
    }
    kept.push_back(std::move(n));
  }
  g->nodes = std::move(kept);
}

}  // namespace

void FuseQdq(Graph* g) {
  Apply(g, FuseAtQuantize);
  DropUnreadDequantize(g);
  for (auto& node : g->nodes) {
    for (auto& [name, sub] : node.subgraphs) FuseQdq(sub.get());
  }
}

}  // namespace onnxflow::graph
