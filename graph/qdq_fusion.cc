#include "graph/qdq_fusion.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "graph/rewrite.h"
#include "graph/value_rank.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
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

// Adds constant `t` as `name` to what `patch` adds, unless the graph or the patch has it already
// (the rule's names are functions of what they hold).
void AddConstant(const Graph& g, Patch* patch, const std::string& name, Tensor t) {
  if (g.constants.count(name)) return;
  for (const auto& [n, c] : patch->constants) {
    if (n == name) return;
  }
  patch->constants.emplace_back(name, std::move(t));
}

// A constant zero point of `type` (0), one per graph.
std::string ZeroConstant(const Graph& g, Patch* patch, DataType type) {
  const std::string name = std::string("onnxflow_qdq_zero_") + DataTypeName(type);
  AddConstant(g, patch, name, type == DataType::kInt8 ? Tensor::Scalar<int8_t>(0) : Tensor::Scalar<uint8_t>(0));
  return name;
}

// Reads the per-tensor constant parameters of a Q or DQ node (inputs 1 and 2) and the 8-bit type
// of its quantized side (`quantized` is its input for DQ, output for Q). False when they are not
// constants with one element, the type is not 8-bit or attributes change the meaning.
bool PerTensorParams(const Graph& g, Patch* patch, const Node& n, const std::string& quantized, QSide* side) {
  const auto& p = *n.proto;
  if (p.input_size() < 2 || Attr(p, "block_size") != nullptr) return false;
  const Tensor* scale = Constant(g, p, 1);
  const Tensor* zero = Constant(g, p, 2);
  if (scale == nullptr || scale->dtype() != DataType::kFloat || scale->size() != 1) return false;
  if (p.input_size() > 2 && !p.input(2).empty() && (zero == nullptr || zero->size() != 1)) return false;
  DataType type = zero != nullptr ? zero->dtype() : KnownType(g, quantized);
  if (zero == nullptr && IsQdqOp(n, "QuantizeLinear")) {
    const auto* dtype = Attr(p, "output_dtype");
    type = dtype != nullptr ? static_cast<DataType>(dtype->i()) : DataType::kUint8;
  }
  if (!Is8Bit(type)) return false;
  if (const auto* sat = Attr(p, "saturate"); sat != nullptr && sat->i() == 0) return false;
  side->value = quantized;
  side->scale = p.input(1);
  side->zero = zero != nullptr ? p.input(2) : ZeroConstant(g, patch, type);
  side->type = type;
  side->scale_value = scale->data<float>()[0];
  side->zero_value = zero != nullptr ? ZeroValue(*zero, 0) : 0.f;
  return true;
}

// The DequantizeLinear that produces `value` (whatever else reads it), with per-tensor params.
bool DqInput(const Graph& g, Patch* patch, const std::string& value, QSide* side) {
  const Id p = g.nodes.Producer(value);
  if (p == kNone) return false;
  const Node& dq = g.nodes[p];
  if (!IsQdqOp(dq, "DequantizeLinear") || dq.proto->input_size() < 1) return false;
  return PerTensorParams(g, patch, dq, dq.proto->input(0), side);
}

// A fresh node in place of op `index`, writing the Q's output (the caller replaces the Q).
// `attrs` names the attributes of the op that carry over.
void Replace(const Graph& g, Id index, Patch* patch, const char* domain, const std::string& op_type,
             std::vector<std::string> inputs, const std::string& output, int opset,
             const std::vector<std::string>& attrs = {}) {
  const Node& original = g.nodes[index];
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_name(original.proto->name());
  proto->set_op_type(op_type);
  proto->set_domain(domain);
  for (auto& in : inputs) proto->add_input(in);
  proto->add_output(output);
  for (const auto& a : original.proto->attribute()) {
    for (const auto& name : attrs) {
      if (a.name() == name) *proto->add_attribute() = a;
    }
  }
  Node node = WithProto(original, std::move(proto));
  node.domain = domain;
  node.opset = opset;
  patch->replaced.push_back(index);
  patch->added.push_back(std::move(node));
}

// The constant weight side of a Conv or MatMul: per-tensor, or per output channel on `axis`.
bool WeightInput(const Graph& g, Patch* patch, const std::string& value, int64_t axis, QSide* side,
                 std::vector<float>* scales) {
  const Id producer = g.nodes.Producer(value);
  if (producer == kNone) return false;
  const Node& dq = g.nodes[producer];
  if (!IsQdqOp(dq, "DequantizeLinear")) return false;
  const auto& p = *dq.proto;
  const Tensor* w = Constant(g, p, 0);
  const Tensor* scale = Constant(g, p, 1);
  const Tensor* zero = Constant(g, p, 2);
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
    side->zero = ZeroConstant(g, patch, w->dtype());
  } else {
    const std::string name = p.input(0) + "_onnxflow_zero";
    AddConstant(g, patch, name,
                w->dtype() == DataType::kInt8
                    ? Tensor::FromVector<int8_t>({scale->size()}, std::vector<int8_t>(scale->size(), 0))
                    : Tensor::FromVector<uint8_t>({scale->size()}, std::vector<uint8_t>(scale->size(), 0)));
    side->zero = name;
  }
  scales->assign(scale->data<float>(), scale->data<float>() + scale->size());
  return true;
}

// A float bias for a Conv (a float constant or DQ of a constant) as int32 in the accumulator's
// scale x_scale * w_scale[m]; the name of a new constant, or "" when there is none to be had.
std::string QuantizedBias(Rewriter& r, Patch* patch, const std::string& value, float x_scale,
                          const std::vector<float>& w_scales, int64_t channels) {
  const Graph& g = r.graph();
  std::vector<float> bias;
  if (const auto c = g.constants.find(value); c != g.constants.end()) {
    if (c->second.dtype() != DataType::kFloat) return "";
    bias.assign(c->second.data<float>(), c->second.data<float>() + c->second.size());
  } else {
    const Id p = g.nodes.Producer(value);
    if (p == kNone) return "";
    const Node& dq = g.nodes[p];
    if (!IsQdqOp(dq, "DequantizeLinear")) return "";
    const Tensor* b = Constant(g, *dq.proto, 0);
    const Tensor* s = Constant(g, *dq.proto, 1);
    const Tensor* z = Constant(g, *dq.proto, 2);
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
  const std::string name = r.FreshName(value + "_onnxflow_int32");
  patch->constants.emplace_back(name, Tensor::FromVector<int32_t>({channels}, q));
  return name;
}

bool FuseConv(Rewriter& r, Id index, const QSide& y, Patch* patch) {
  const Graph& g = r.graph();
  const auto& c = *g.nodes[index].proto;
  if (c.input_size() < 2) return false;
  QSide x, w;
  std::vector<float> w_scales;
  if (!DqInput(g, patch, c.input(0), &x) || !WeightInput(g, patch, c.input(1), 0, &w, &w_scales)) return false;
  const int64_t channels = g.constants.at(w.value).dim(0);
  std::string bias;
  if (c.input_size() > 2 && !c.input(2).empty()) {
    bias = QuantizedBias(r, patch, c.input(2), x.scale_value, w_scales, channels);
    if (bias.empty()) return false;
  }
  std::vector<std::string> in = {x.value, x.scale, x.zero, w.value, w.scale, w.zero, y.scale, y.zero};
  if (!bias.empty()) in.push_back(bias);
  Replace(g, index, patch, kOnnxDomain, "QLinearConv", in, y.value, g.nodes[index].opset,
          {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"});
  return true;
}

bool FuseMatMul(Rewriter& r, Id index, const QSide& y, Patch* patch) {
  const Graph& g = r.graph();
  const auto& m = *g.nodes[index].proto;
  if (m.input_size() != 2) return false;
  QSide a, b;
  std::vector<float> b_scales;
  if (!DqInput(g, patch, m.input(0), &a)) return false;
  const bool b_const = [&] {
    const Id p = g.nodes.Producer(m.input(1));
    if (p == kNone) return false;
    const Tensor* w = Constant(g, *g.nodes[p].proto, 0);
    return w != nullptr && w->rank() == 2;
  }();
  // QLinearMatMul takes b's scale per tensor or, for a 2-D b, per column (DQ axis 1).
  if (!(b_const ? WeightInput(g, patch, m.input(1), 1, &b, &b_scales) : DqInput(g, patch, m.input(1), &b))) {
    return false;
  }
  Replace(g, index, patch, kOnnxDomain, "QLinearMatMul",
          {a.value, a.scale, a.zero, b.value, b.scale, b.zero, y.scale, y.zero}, y.value, g.nodes[index].opset);
  return true;
}

// DQ(a), DQ(b const, per tensor or per output column) [, bias] -> Gemm (alpha 1, beta 1) -> Q:
// com.microsoft QGemm, the bias quantized to int32 as a Conv's is (a classifier head keeps its
// int8 weights).
bool FuseGemm(Rewriter& r, Id index, const QSide& y, Patch* patch) {
  const Graph& g = r.graph();
  const auto& m = *g.nodes[index].proto;
  if (m.input_size() < 2) return false;
  for (const char* name : {"alpha", "beta"}) {
    if (const auto* a = Attr(m, name); a != nullptr && a->f() != 1.0f) return false;
  }
  const auto* trans_b = Attr(m, "transB");
  const int64_t axis = trans_b != nullptr && trans_b->i() != 0 ? 0 : 1;  // B's output columns
  QSide a, b;
  std::vector<float> b_scales;
  if (!DqInput(g, patch, m.input(0), &a) || !WeightInput(g, patch, m.input(1), axis, &b, &b_scales)) return false;
  const Tensor& w = g.constants.at(b.value);
  if (w.rank() != 2) return false;
  std::string bias;
  if (m.input_size() > 2 && !m.input(2).empty()) {
    bias = QuantizedBias(r, patch, m.input(2), a.scale_value, b_scales, w.dim(axis));
    if (bias.empty()) return false;
  }
  Replace(g, index, patch, kMsDomain, "QGemm", {a.value, a.scale, a.zero, b.value, b.scale, b.zero, bias, y.scale, y.zero},
          y.value, 1, {"transA", "transB"});
  return true;
}

// A com.microsoft QLinear op over per-tensor DQ inputs, all of y's type.
bool FuseMs(Rewriter& r, Id index, const QSide& y, Patch* patch) {
  const Graph& g = r.graph();
  const Node& node = g.nodes[index];
  const onnx::NodeProto op = *node.proto;
  const std::string& t = op.op_type();
  std::vector<QSide> xs(op.input_size());
  const int data_inputs = t == "Concat" ? op.input_size() : (t == "Add" || t == "Mul") ? 2 : 1;
  if (op.input_size() < data_inputs || data_inputs == 0) return false;
  for (int i = 0; i < data_inputs; ++i) {
    if (!DqInput(g, patch, op.input(i), &xs[i]) || xs[i].type != y.type) return false;
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
  Replace(g, index, patch, kMsDomain, fused, in, y.value, 1, attrs);
  return true;
}

// Ops that only move or select elements of their first input (the others are shapes, axes or
// permutations), taking any element type at every opset a model may use (Flatten from 9): a
// per-tensor QuantizeLinear after one equals the op after the QuantizeLinear.
bool MovesElements(const Node& n) {
  const std::string& t = n.op_type();
  return t == "Reshape" || t == "Transpose" || t == "Squeeze" || t == "Unsqueeze" || t == "Identity" ||
         t == "DepthToSpace" || t == "SpaceToDepth" || (t == "Flatten" && n.opset >= 9);
}

// Ops that pick, repeat or pad elements of their first input (any element type): Slice, Gather
// (of data), Expand, Tile, nearest Resize and Pad (a constant pad of 0.0 becomes the zero point).
// Between a DQ and a Q of the same parameters they are exact on the bytes; they are not moved
// (as HoistQuantize moves MovesElements ops), since a Q before them would quantize more values.
bool SelectsElements(const Graph& g, const Node& n) {
  const std::string& t = n.op_type();
  if (t == "Slice" || t == "Gather" || t == "Expand" || t == "Tile") return true;
  if (t == "Resize") {
    const auto* mode = Attr(*n.proto, "mode");
    const auto* coord = Attr(*n.proto, "coordinate_transformation_mode");
    return n.opset >= 10 && (mode == nullptr || mode->s() == "nearest") &&
           (coord == nullptr || coord->s() != "tf_crop_and_resize");
  }
  if (t == "Pad" && n.opset >= 11) {
    const auto* mode = Attr(*n.proto, "mode");
    if (mode != nullptr && mode->s() != "constant") return true;
    if (n.proto->input_size() < 3 || n.proto->input(2).empty()) return true;
    auto c = g.constants.find(n.proto->input(2));
    return c != g.constants.end() && c->second.dtype() == DataType::kFloat && c->second.size() == 1 &&
           c->second.data<float>()[0] == 0.0f;
  }
  return false;
}

// DQ -> op -> Q with equal parameters on both sides: the op on the 8-bit values is exact.
bool PassThrough(Rewriter& r, Id index, const QSide& y, Patch* patch) {
  const Graph& g = r.graph();
  const Node& node = g.nodes[index];
  const std::string& t = node.op_type();
  QSide x;
  if (!DqInput(g, patch, node.proto->input(0), &x)) return false;
  if (x.type != y.type || x.scale_value != y.scale_value || x.zero_value != y.zero_value) return false;
  // 8-bit inputs: MaxPool from 12, Max from 12; the ops that move elements take any type.
  if ((t == "MaxPool" || t == "Relu") && node.opset < 12) return false;
  if (node.proto->output_size() != 1) return false;
  auto proto = std::make_shared<onnx::NodeProto>(*node.proto);
  if (t == "Relu") {
    proto->set_op_type("Max");
    proto->add_input(x.zero);
  }
  if (t == "Pad") {  // the constant pad (0.0, or none) is the zero point in bytes
    const auto* mode = Attr(*node.proto, "mode");
    if (mode == nullptr || mode->s() == "constant") {
      while (proto->input_size() < 3) proto->add_input("");
      proto->set_input(2, x.zero);
    }
  }
  proto->set_input(0, x.value);
  proto->set_output(0, y.value);
  patch->replaced.push_back(index);
  patch->added.push_back(WithProto(node, std::move(proto)));
  return true;
}

bool FuseWithProducer(Rewriter& r, const Node& q, Id p, Patch* patch);

// Q after an op that moves elements, or after a Relu, whose input is not a DQ of Q's parameters:
// Q moves before the op, which then runs on bytes (a Relu becomes Max with Q's zero point, exact
// because quantization is monotonic and maps 0 to the zero point), and the moved Q fuses with
// what comes before when it can. So DQ -> Relu -> Reshape -> Transpose -> Reshape -> Q (a
// ShuffleNet's channel shuffle) becomes DQ -> Q (a ByteLookup, or nothing) and three byte
// moves instead of four float ops between two quantized convolutions.
bool HoistQuantize(Rewriter& r, const Node& q, Id p, const QSide& y, Patch* patch) {
  const Graph& g = r.graph();
  const Node& op = g.nodes[p];
  const std::string& v = op.proto->input(0);
  if (v.empty()) return false;
  auto moved = std::make_shared<onnx::NodeProto>(*q.proto);
  const std::string quantized = r.FreshName(v + "_quantized");
  moved->set_name(q.proto->name() + "/before_" + op.proto->name());
  moved->set_input(0, v);
  moved->set_output(0, quantized);
  patch->types.emplace_back(quantized, y.type);
  Node hoisted = WithProto(q, std::move(moved));

  auto proto = std::make_shared<onnx::NodeProto>(*op.proto);
  proto->set_input(0, quantized);
  proto->set_output(0, y.value);
  const bool relu = op.op_type() == "Relu";
  if (relu) {
    proto->set_op_type("Max");
    proto->add_input(y.zero);
  }
  Node on_bytes = WithProto(op, std::move(proto));
  if (relu) on_bytes.opset = std::max(on_bytes.opset, 13);  // Max takes 8-bit inputs from opset 12
  patch->replaced.push_back(p);
  const Id before = SoleReaderProducer(g, v);
  if (before == kNone || !FuseWithProducer(r, hoisted, before, patch)) patch->added.push_back(std::move(hoisted));
  patch->added.push_back(std::move(on_bytes));
  return true;
}

// Quantize node `q` (in the graph, or the one a patch makes) fused with op `p`, the sole producer
// of its input: what replaces `p` goes into `patch`; false when nothing fuses.
bool FuseWithProducer(Rewriter& r, const Node& q, Id p, Patch* patch) {
  const Graph& g = r.graph();
  const Node& op = g.nodes[p];
  if (!op.domain.empty() || op.proto->output_size() != 1 || op.proto->input_size() < 1) return false;
  QSide y;
  if (!PerTensorParams(g, patch, q, q.proto->output(0), &y)) return false;
  const std::string& t = op.op_type();
  if (t == "Relu" && y.zero_value == (y.type == DataType::kInt8 ? -128.0f : 0.0f)) {
    // Relu -> Q whose zero point is its type's least value: the quantization clamps at zero
    // already and the Relu changes nothing (ONNX Runtime's quantizer leaves such Relus out). Q
    // reads the Relu's input, and fuses with what produces it when it can.
    auto proto = std::make_shared<onnx::NodeProto>(*q.proto);
    proto->set_input(0, op.proto->input(0));
    Node direct = WithProto(q, std::move(proto));
    patch->replaced.push_back(p);
    const Id before = SoleReaderProducer(g, op.proto->input(0));
    if (before == kNone || !FuseWithProducer(r, direct, before, patch)) patch->added.push_back(std::move(direct));
    return true;
  }
  if (t == "Conv") return FuseConv(r, p, y, patch);
  if (t == "MatMul") return FuseMatMul(r, p, y, patch);
  if (t == "Gemm") return FuseGemm(r, p, y, patch);
  if (t == "Add" || t == "Mul" || t == "Concat" || t == "GlobalAveragePool" || t == "AveragePool" ||
      t == "Sigmoid" || t == "LeakyRelu") {
    return FuseMs(r, p, y, patch);
  }
  if (t == "MaxPool" || t == "Relu" || MovesElements(op)) {
    return PassThrough(r, p, y, patch) || (t != "MaxPool" && HoistQuantize(r, q, p, y, patch));
  }
  if (SelectsElements(g, op)) return PassThrough(r, p, y, patch);
  return false;
}

}  // namespace

std::optional<Patch> FuseAtQuantize(Rewriter& r, Id q_id) {
  const Node& q = r[q_id];
  if (!IsQdqOp(q, "QuantizeLinear") || q.proto->output_size() != 1 || q.proto->input_size() < 2) return std::nullopt;
  const Id p = SoleReaderProducer(r.graph(), q.proto->input(0));
  Patch patch;
  if (p == kNone || !FuseWithProducer(r, q, p, &patch)) return std::nullopt;
  patch.replaced.push_back(q_id);
  return patch;
}

// A DequantizeLinear no node reads any more (its fused readers read the 8-bit value) goes now, so
// that constant folding does not make float copies of the weights.
std::optional<Patch> DropUnreadDequantize(Rewriter& r, Id id) {
  const Node& n = r[id];
  if (!IsQdqOp(n, "DequantizeLinear") || n.proto->output_size() != 1 || r.nodes().ReadCount(n.proto->output(0)) != 0) {
    return std::nullopt;
  }
  return Patch{{id}, {}, {}};
}

// DequantizeLinear -> QuantizeLinear, the DQ's only reader the Q, both per tensor on 8-bit values
// (what ResNet's QLinearAdd -> Relu -> Q leaves once the Relu went): com.onnxflow ByteLookup with
// the pair's result for each of the 256 inputs, computed with the float operations of the
// DequantizeLinear and QuantizeLinear kernels ((x - z) * s, then round_half_even(v / s') + z',
// saturated), so the values are the pair's exactly.
std::optional<Patch> FuseRequantize(Rewriter& r, Id q_id) {
  const Graph& g = r.graph();
  const Node& q = r[q_id];
  if (!IsQdqOp(q, "QuantizeLinear") || q.proto->output_size() != 1 || q.proto->input_size() < 2) return std::nullopt;
  const Id dq_id = SoleReaderProducer(g, q.proto->input(0));
  if (dq_id == kNone) return std::nullopt;
  const Node& dq = r[dq_id];
  if (!IsQdqOp(dq, "DequantizeLinear") || dq.proto->input_size() < 2 || dq.proto->output_size() != 1) {
    return std::nullopt;
  }
  Patch patch;
  QSide in, out;
  if (!PerTensorParams(g, &patch, dq, dq.proto->input(0), &in) ||
      !PerTensorParams(g, &patch, q, q.proto->output(0), &out)) {
    return std::nullopt;
  }
  const float lo = out.type == DataType::kInt8 ? -128.f : 0.f, hi = out.type == DataType::kInt8 ? 127.f : 255.f;
  std::vector<uint8_t> table(256);
  for (int b = 0; b < 256; ++b) {
    const float x = in.type == DataType::kInt8 ? static_cast<float>(static_cast<int8_t>(b)) : static_cast<float>(b);
    const float v = (x - in.zero_value) * in.scale_value;
    const float y = std::min(hi, std::max(lo, std::nearbyint(v / out.scale_value) + out.zero_value));
    table[b] = out.type == DataType::kInt8 ? static_cast<uint8_t>(static_cast<int8_t>(y)) : static_cast<uint8_t>(y);
  }
  bool identity = in.type == out.type;
  for (int b = 0; b < 256 && identity; ++b) identity = table[b] == b;
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_name(q.proto->name());
  proto->add_input(in.value);
  proto->add_output(q.proto->output(0));
  if (identity) {
    // Equal parameters on both sides (what HoistQuantize leaves when a chain of byte moves sat
    // between them): an Identity, which FuseForInference's RemovePassThrough then removes.
    proto->set_op_type("Identity");
    patch.replaced = {dq_id, q_id};
    Node node = WithProto(q, std::move(proto));
    node.domain = kOnnxDomain;  // q may be com.microsoft's QuantizeLinear
    node.opset = 13;
    patch.added.push_back(std::move(node));
    return patch;
  }
  Tensor t(out.type, {256});
  std::memcpy(t.mutable_raw_data(), table.data(), 256);
  const std::string name = r.FreshName(q.proto->output(0) + "_onnxflow_lookup");
  patch.constants.emplace_back(name, std::move(t));
  proto->set_op_type(internal_ops::kByteLookup);
  proto->set_domain(kOnnxflowDomain);
  proto->add_input(name);
  Node node = WithProto(q, std::move(proto));
  node.domain = kOnnxflowDomain;
  node.opset = internal_ops::kVersion;
  patch.replaced = {dq_id, q_id};
  patch.added.push_back(std::move(node));
  return patch;
}

namespace {

// Elementwise float ops whose every input is the lookup's x, a value of the cone, or a constant
// of one element: the cone computes a function of x alone.
bool IsElementwiseFloat(const Node& n) {
  static const std::set<std::string> kOps = {
      "Abs", "Neg", "Relu", "LeakyRelu", "Elu", "Selu", "Celu", "Sigmoid", "HardSigmoid", "HardSwish", "Tanh",
      "Softplus", "Softsign", "Exp", "Log", "Sqrt", "Reciprocal", "Erf", "Gelu", "Mish", "ThresholdedRelu",
      "Floor", "Ceil", "Round", "Sin", "Cos", "Clip", "Identity", "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min",
      "PRelu"};
  return n.domain.empty() && n.subgraphs.empty() && n.proto->output_size() == 1 && kOps.count(n.op_type()) != 0;
}

// An inference BatchNormalization (opset 7 on, one output, spatial) whose scale, bias, mean and
// variance are float constants of one value per channel: a per-channel affine map of its input.
bool IsConstantBatchNorm(const Graph& g, const Node& n) {
  const auto& p = *n.proto;
  if (!n.domain.empty() || n.op_type() != "BatchNormalization" || n.opset < 7 || p.output_size() != 1 ||
      p.input_size() != 5) {
    return false;
  }
  if (const auto* a = Attr(p, "training_mode"); a != nullptr && a->i() != 0) return false;
  if (const auto* a = Attr(p, "spatial"); a != nullptr && a->i() != 1) return false;
  int64_t channels = -1;
  for (int i = 1; i < 5; ++i) {
    const Tensor* c = Constant(g, p, i);
    if (c == nullptr || c->dtype() != DataType::kFloat || c->rank() != 1) return false;
    if (channels >= 0 && c->size() != channels) return false;
    channels = c->size();
  }
  return channels > 0;
}

// The elementwise nodes that compute `v` from the output of one DequantizeLinear (`*dq`: kNone
// until the walk meets it, then every other path must end at that one too) and constants, in an
// order that puts producers first; false when v is not such a function or the cone grows past 16
// nodes. Constants of one element always qualify; a larger float one (a per-channel [C, 1, 1]
// operand) and a constant BatchNormalization (its input walked, not its parameters: its scale goes,
// marked true, as the channel count along axis 1 whatever X's rank) go into `*per_channel` for
// the caller to check against the channel axis.
using WideConstants = std::vector<std::pair<std::string, bool>>;
bool CollectCone(const Graph& g, const std::string& v, Id* dq, std::vector<Id>* cone, WideConstants* per_channel) {
  if (auto c = g.constants.find(v); c != g.constants.end()) {
    if (c->second.dtype() != DataType::kFloat) return false;
    if (c->second.size() == 1 && c->second.rank() <= 1) return true;
    per_channel->emplace_back(v, false);
    return true;
  }
  const Id p = g.nodes.Producer(v);
  if (p == kNone) return false;
  const Node& node = g.nodes[p];
  if (IsQdqOp(node, "DequantizeLinear")) {
    if (*dq == kNone) *dq = p;
    return *dq == p;
  }
  const bool batch_norm = IsConstantBatchNorm(g, node);
  if (!batch_norm && !IsElementwiseFloat(node)) return false;
  if (std::find(cone->begin(), cone->end(), p) != cone->end()) return true;
  if (cone->size() >= 16) return false;
  if (batch_norm) {
    per_channel->emplace_back(node.proto->input(1), true);
    if (!CollectCone(g, node.proto->input(0), dq, cone, per_channel)) return false;
  } else {
    for (const auto& in : node.proto->input()) {
      if (!in.empty() && !CollectCone(g, in, dq, cone, per_channel)) return false;
    }
  }
  cone->push_back(p);
  return true;
}

// Whether constant `t`, broadcast against a value of rank `rank`, varies along axis 1 alone (of
// `*channels` values: set by the first that does, checked against by the rest). A 1-D
// BatchNormalization parameter is taken as the channels themselves.
bool AlongChannels(const Tensor& t, int64_t rank, bool batch_norm_param, int64_t* channels) {
  int64_t along = 1;
  if (batch_norm_param) {
    along = t.size();
  } else {
    if (t.rank() > rank) return false;
    for (int64_t d = 0; d < t.rank(); ++d) {
      const int64_t axis = rank - t.rank() + d;
      if (axis == 1) {
        along = t.dim(d);
      } else if (t.dim(d) != 1) {
        return false;
      }
    }
  }
  if (along == 1) return true;
  if (*channels == 0) *channels = along;
  return *channels == along;
}

// The 8-bit type of the quantized side of Q or DQ `n` when its scale and zero point are constants
// of one value, or of one per channel along axis 1 of a rank-`rank` value (-1: not known, so a
// negative axis is not taken) (checked against and setting `*channels` as AlongChannels);
// kUndefined otherwise.
DataType ChannelQuantType(const Graph& g, const Node& n, const std::string& quantized, int64_t rank,
                          int64_t* channels) {
  const auto& p = *n.proto;
  if (p.input_size() < 2 || Attr(p, "block_size") != nullptr) return DataType::kUndefined;
  if (const auto* sat = Attr(p, "saturate"); sat != nullptr && sat->i() == 0) return DataType::kUndefined;
  const Tensor* scale = Constant(g, p, 1);
  const Tensor* zero = Constant(g, p, 2);
  if (scale == nullptr || scale->dtype() != DataType::kFloat || scale->rank() > 1) return DataType::kUndefined;
  if (HasInput(p, 2) && (zero == nullptr || zero->size() != scale->size())) return DataType::kUndefined;
  if (scale->size() != 1) {
    int64_t axis = Attr(p, "axis") != nullptr ? Attr(p, "axis")->i() : 1;
    if (axis < 0) axis = rank < 0 ? -1 : axis + rank;
    if (axis != 1 || !AlongChannels(*scale, rank, /*batch_norm_param=*/true, channels)) return DataType::kUndefined;
  }
  DataType type = zero != nullptr ? zero->dtype() : KnownType(g, quantized);
  if (zero == nullptr && IsQdqOp(n, "QuantizeLinear")) {
    const auto* dtype = Attr(p, "output_dtype");
    type = dtype != nullptr ? static_cast<DataType>(dtype->i()) : DataType::kUint8;
  }
  return Is8Bit(type) ? type : DataType::kUndefined;
}

// BatchNormalization's per-channel multiplier and addend as ONNX Runtime's CPU kernel computes
// them for inference, in float: inv_std = 1 / sqrt(var + epsilon), s = inv_std * scale, b = bias -
// mean * s; it then computes y = x * s + b, a product and a sum (no fused multiply-add). Checked on
// DenseNet-121's 62 BatchNormalizations over every code of every channel (8.8 M values, each a
// DQ -> BatchNormalization -> Relu -> Q model run in ONNX Runtime): this order gives its bytes
// after the QuantizeLinear everywhere; onnxflow's own kernel (scale / sqrt in double, then an
// FMA) differs on 22, (x - mean) / sqrt(var + eps) * scale + bias on 33. The product mean * s goes
// through a volatile so that no build (-march with FMA) contracts the difference into one.
void OrtBatchNormAffine(const Graph& g, const Node& bn, std::vector<float>* s, std::vector<float>* b) {
  const auto& p = *bn.proto;
  const auto* eps_attr = Attr(p, "epsilon");
  const float epsilon = eps_attr != nullptr ? eps_attr->f() : 1e-5f;
  const float* scale = Constant(g, p, 1)->data<float>();
  const float* bias = Constant(g, p, 2)->data<float>();
  const float* mean = Constant(g, p, 3)->data<float>();
  const float* var = Constant(g, p, 4)->data<float>();
  const int64_t channels = Constant(g, p, 1)->size();
  s->resize(channels);
  b->resize(channels);
  for (int64_t c = 0; c < channels; ++c) {
    const float root = std::sqrt(var[c] + epsilon);
    const float inv_std = 1.0f / root;
    (*s)[c] = inv_std * scale[c];
    volatile float shift = mean[c] * (*s)[c];
    (*b)[c] = bias[c] - shift;
  }
}

// The value of constant `t` for channel c: one value for all, or one per channel (a [C], [C, 1, 1]
// or [1, C, 1, 1] tensor: its elements in channel order).
float ChannelValue(const Tensor& t, int64_t c) {
  const int64_t i = t.size() == 1 ? 0 : c;
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[i];
    case DataType::kInt8: return static_cast<float>(t.data<int8_t>()[i]);
    case DataType::kUint8: return static_cast<float>(t.data<uint8_t>()[i]);
    default: return 0.0f;
  }
}

// The rows of a per-channel lookup's Affine input (ops/quant_ms/channel_affine.h: xz, xs, s, b,
// lo, hi, ys, yz per channel) when the cone from DQ to Q is one x * s + b step (a constant
// BatchNormalization as ONNX Runtime computes it, a Mul by a constant, an Add of one, or a Mul
// then an Add) and then at most one Relu or Clip by constants, each node reading the one before;
// nullopt for any other cone (the lookup then reads its table). The kernel checks these rows
// against the folded table before it uses them.
std::optional<Tensor> AffineRows(const Graph& g, const Node& dq, const std::vector<Id>& cone, const Node& q,
                                 int64_t channels) {
  const float inf = std::numeric_limits<float>::infinity();
  std::vector<float> rows(8 * channels, 0.0f);
  auto row = [&](int r) { return rows.data() + r * channels; };
  std::fill(row(2), row(3), 1.0f);   // s
  std::fill(row(4), row(5), -inf);   // lo
  std::fill(row(5), row(6), inf);    // hi
  const Tensor* xs = Constant(g, *dq.proto, 1);
  const Tensor* xz = Constant(g, *dq.proto, 2);
  const Tensor* ys = Constant(g, *q.proto, 1);
  const Tensor* yz = Constant(g, *q.proto, 2);
  for (int64_t c = 0; c < channels; ++c) {
    row(0)[c] = xz != nullptr ? ChannelValue(*xz, c) : 0.0f;
    row(1)[c] = ChannelValue(*xs, c);
    row(6)[c] = ChannelValue(*ys, c);
    row(7)[c] = yz != nullptr ? ChannelValue(*yz, c) : 0.0f;
  }
  enum { kAsIs, kScaled, kShifted, kClamped } step = kAsIs;
  std::string prev = dq.proto->output(0);
  for (Id id : cone) {
    const Node& n = g.nodes[id];
    const auto& p = *n.proto;
    // The constant operand of a binary op whose other operand is prev.
    auto operand = [&]() -> const Tensor* {
      if (p.input_size() != 2) return nullptr;
      const int other = p.input(0) == prev ? 1 : p.input(1) == prev ? 0 : -1;
      return other < 0 ? nullptr : Constant(g, p, other);
    };
    if (IsConstantBatchNorm(g, n) && step == kAsIs && p.input(0) == prev) {
      std::vector<float> s, b;
      OrtBatchNormAffine(g, n, &s, &b);
      std::copy(s.begin(), s.end(), row(2));
      std::copy(b.begin(), b.end(), row(3));
      step = kShifted;
    } else if (n.op_type() == "Mul" && step == kAsIs && operand() != nullptr) {
      for (int64_t c = 0; c < channels; ++c) row(2)[c] = ChannelValue(*operand(), c);
      step = kScaled;
    } else if (n.op_type() == "Add" && (step == kAsIs || step == kScaled) && operand() != nullptr) {
      for (int64_t c = 0; c < channels; ++c) row(3)[c] = ChannelValue(*operand(), c);
      step = kShifted;
    } else if (n.op_type() == "Relu" && step != kClamped && p.input(0) == prev) {
      std::fill(row(4), row(5), 0.0f);
      step = kClamped;
    } else if (n.op_type() == "Clip" && step != kClamped && p.input(0) == prev && n.opset >= 11) {
      for (int i : {1, 2}) {
        if (!HasInput(p, i)) continue;
        const Tensor* bound = Constant(g, p, i);
        if (bound == nullptr || bound->size() != 1) return std::nullopt;
        std::fill(row(i == 1 ? 4 : 5), row(i == 1 ? 5 : 6), bound->data<float>()[0]);
      }
      step = kClamped;
    } else {
      return std::nullopt;
    }
    prev = p.output(0);
  }
  return Tensor::FromVector<float>({8, channels}, rows);
}

}  // namespace

// DQ -> elementwise float ops -> Q, where the ops compute a function of the DQ's value alone (a
// HardSwish, x * Sigmoid(x), Clip, Mul by a constant, ...) and nothing else reads what they
// write: a ByteLookup of x whose table is those nodes applied to the 256 bytes. The rule writes
// the table as the same nodes over a constant of the 256 codes, which constant folding, next,
// computes with the kernels that would have run: the lookup gives their bytes exactly.
//
// Per channel: when the function differs by channel (a constant BatchNormalization, a Mul / Add
// by a [C, 1, 1] constant, a DQ or Q with a scale per channel of axis 1) the codes are a value of
// X's rank with C along axis 1 and the 256 codes along the next ([1, C, 256, 1], or [256, C] for
// 2-D X), the table [C, 256] and the ByteLookup per channel of axis 1: DenseNet's pre-activation
// DQ -> BatchNormalization -> Relu -> Q, 62 of them, each one pass over bytes instead of three over
// floats, and (a byte op) it stays in the channels-last region. A BatchNormalization becomes
// Mul and Add by ONNX Runtime's own per-channel factors (OrtBatchNormAffine), so the table has
// ONNX Runtime's bytes. A constant that varies along another axis, a DQ or Q per channel of
// another axis, or X of unproven rank keeps the float ops.
std::optional<Patch> FuseElementwiseLookup(Rewriter& r, Id q_id) {
  const Graph& g = r.graph();
  const Node& q = r[q_id];
  if (!IsQdqOp(q, "QuantizeLinear") || q.proto->output_size() != 1 || q.proto->input_size() < 2) return std::nullopt;
  const Id last = g.nodes.Producer(q.proto->input(0));
  if (last == kNone || !(IsElementwiseFloat(g.nodes[last]) || IsConstantBatchNorm(g, g.nodes[last]))) {
    return std::nullopt;
  }
  Id dq_id = kNone;
  std::vector<Id> cone;
  WideConstants wide;  // constants of more than one element
  if (!CollectCone(g, q.proto->input(0), &dq_id, &cone, &wide) || dq_id == kNone) return std::nullopt;
  const Node& dq = g.nodes[dq_id];
  if (dq.proto->output_size() != 1) return std::nullopt;
  Patch patch;
  QSide in, out;
  const bool per_tensor = wide.empty() && PerTensorParams(g, &patch, dq, dq.proto->input(0), &in) &&
                          PerTensorParams(g, &patch, q, q.proto->output(0), &out);
  int64_t rank = 0, channels = 0;
  if (!per_tensor) {
    // X's rank places a [C, 1, 1] operand; with BatchNormalization parameters alone (their axis is
    // 1 at any rank) codes of rank 3 do when the rank is not proven (DenseNet's Concat chains run
    // past the proof's 16 levels).
    rank = ProvenRank(g, dq.proto->input(0));
    const bool only_batch_norm = std::all_of(wide.begin(), wide.end(), [](const auto& w) { return w.second; });
    const bool proven = rank >= 0;
    if (!proven && only_batch_norm) rank = 3;
    if (rank < 2) return std::nullopt;
    for (const auto& [name, bn_param] : wide) {
      if (!AlongChannels(g.constants.at(name), rank, bn_param, &channels)) return std::nullopt;
    }
    in.value = dq.proto->input(0);
    in.type = ChannelQuantType(g, dq, in.value, proven ? rank : -1, &channels);
    out.type = ChannelQuantType(g, q, q.proto->output(0), proven ? rank : -1, &channels);
    if (in.type == DataType::kUndefined || out.type == DataType::kUndefined || channels <= 0) return std::nullopt;
  }
  // Only the cone and the Q read what the cone writes.
  for (Id id : cone) {
    const std::string& v = g.nodes[id].proto->output(0);
    if (g.nodes.IsOutput(v)) return std::nullopt;
    for (Id reader : g.nodes.Readers(v)) {
      if (reader != q_id && std::find(cone.begin(), cone.end(), reader) == cone.end()) return std::nullopt;
    }
  }

  // The table: DQ(codes) -> the cone's copies -> Q, folded at load.
  std::map<std::string, std::string> renamed;
  const std::string codes = r.FreshName(in.value + "_codes");
  std::vector<int64_t> codes_shape = {256};
  if (!per_tensor) {
    codes_shape.assign(rank, 1);
    codes_shape[rank == 2 ? 0 : 2] = 256;
    codes_shape[1] = channels;
  }
  Tensor all(in.type, codes_shape);
  const int64_t stride = per_tensor || rank > 2 ? 1 : channels;  // [256, C]: a code per row
  for (int64_t i = 0; i < all.size(); ++i) {
    static_cast<uint8_t*>(all.mutable_raw_data())[i] = static_cast<uint8_t>(i / stride % 256);
  }
  patch.constants.emplace_back(codes, std::move(all));
  auto add = [&](const Node& like, std::shared_ptr<onnx::NodeProto> proto, int opset) {
    Node n = WithProto(like, std::move(proto));
    n.domain = kOnnxDomain;
    n.opset = opset;
    patch.added.push_back(std::move(n));
  };
  auto copy = [&](const Node& n, const std::string& first_input) {
    auto proto = std::make_shared<onnx::NodeProto>(*n.proto);
    proto->set_name(n.proto->name() + "/lookup_table");
    for (int i = 0; i < proto->input_size(); ++i) {
      if (auto it = renamed.find(proto->input(i)); it != renamed.end()) proto->set_input(i, it->second);
    }
    if (!first_input.empty()) proto->set_input(0, first_input);
    const std::string output = r.FreshName(n.proto->output(0) + "/lookup_table");
    renamed[n.proto->output(0)] = output;
    proto->set_output(0, output);
    if (!IsConstantBatchNorm(g, n)) {
      patch.added.push_back(WithProto(n, std::move(proto)));
      return;
    }
    // x * s + b per channel, s and b shaped [C, 1, ...] to broadcast along axis 1 of the codes.
    std::vector<float> s, b;
    OrtBatchNormAffine(g, n, &s, &b);
    std::vector<int64_t> shape(std::max<int64_t>(rank - 1, 1), 1);
    shape[0] = static_cast<int64_t>(s.size());
    const std::string s_name = r.FreshName(n.proto->output(0) + "/lookup_scale");
    const std::string b_name = r.FreshName(n.proto->output(0) + "/lookup_bias");
    const std::string product = r.FreshName(n.proto->output(0) + "/lookup_product");
    patch.constants.emplace_back(s_name, Tensor::FromVector<float>(shape, s));
    patch.constants.emplace_back(b_name, Tensor::FromVector<float>(shape, b));
    auto mul = std::make_shared<onnx::NodeProto>();
    mul->set_name(proto->name() + "/mul");
    mul->set_op_type("Mul");
    mul->add_input(proto->input(0));
    mul->add_input(s_name);
    mul->add_output(product);
    add(n, std::move(mul), 13);
    auto sum = std::make_shared<onnx::NodeProto>();
    sum->set_name(proto->name() + "/add");
    sum->set_op_type("Add");
    sum->add_input(product);
    sum->add_input(b_name);
    sum->add_output(output);
    add(n, std::move(sum), 13);
  };
  copy(dq, codes);
  for (Id id : cone) copy(g.nodes[id], "");
  copy(q, "");
  std::string table = renamed[q.proto->output(0)];
  if (!per_tensor) {  // the folded codes' results as [C, 256]
    const std::string rows = r.FreshName(q.proto->output(0) + "_onnxflow_lookup");
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_name(q.proto->name() + "/lookup_table_rows");
    proto->add_input(table);
    proto->add_output(rows);
    if (rank == 2) {
      proto->set_op_type("Transpose");
      auto* perm = proto->add_attribute();
      perm->set_name("perm");
      perm->set_type(onnx::AttributeProto::INTS);
      perm->add_ints(1);
      perm->add_ints(0);
    } else {
      const std::string shape = r.FreshName(q.proto->output(0) + "_onnxflow_lookup_shape");
      patch.constants.emplace_back(shape, Tensor::FromVector<int64_t>({2}, {channels, 256}));
      proto->set_op_type("Reshape");
      proto->add_input(shape);
    }
    add(q, std::move(proto), 13);
    table = rows;
  }

  auto lookup = std::make_shared<onnx::NodeProto>();
  lookup->set_name(q.proto->name());
  lookup->set_op_type(internal_ops::kByteLookup);
  lookup->set_domain(kOnnxflowDomain);
  lookup->add_input(in.value);
  lookup->add_input(table);
  lookup->add_output(q.proto->output(0));
  if (!per_tensor) {
    SetIntAttr(lookup.get(), "axis", 1);
    if (auto affine = AffineRows(g, dq, cone, q, channels)) {
      const std::string name = r.FreshName(q.proto->output(0) + "_onnxflow_affine");
      patch.constants.emplace_back(name, std::move(*affine));
      lookup->add_input(name);
    }
  }
  Node node = WithProto(q, std::move(lookup));
  node.domain = kOnnxflowDomain;
  node.opset = internal_ops::kVersion;
  patch.added.push_back(std::move(node));
  patch.replaced = cone;
  patch.replaced.push_back(q_id);
  return patch;
}

Status FuseQdq(Graph* g) {
  ONNXFLOW_RETURN_IF_ERROR(RunRuleEverywhere(g, "FuseAtQuantize", FuseAtQuantize));
  ONNXFLOW_RETURN_IF_ERROR(RunRuleEverywhere(g, "FuseRequantize", FuseRequantize));
  ONNXFLOW_RETURN_IF_ERROR(RunRuleEverywhere(g, "FuseElementwiseLookup", FuseElementwiseLookup));
  return RunRuleEverywhere(g, "DropUnreadDequantize", DropUnreadDequantize);
}

}  // namespace onnxflow::graph
