#include "graph/qdq_fusion.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "graph/qdq_util.h"
#include "graph/rewrite.h"
#include "ops/framework/domains.h"
#include "ops/framework/registry.h"

namespace onnxflow::graph {
namespace {

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

Status FuseQdq(Graph* g) {
  ONNXFLOW_RETURN_IF_ERROR(RunRuleEverywhere(g, "FuseAtQuantize", FuseAtQuantize));
  ONNXFLOW_RETURN_IF_ERROR(RunRuleEverywhere(g, "FuseRequantize", FuseRequantize));
  ONNXFLOW_RETURN_IF_ERROR(RunRuleEverywhere(g, "FuseElementwiseLookup", FuseElementwiseLookup));
  ONNXFLOW_RETURN_IF_ERROR(RunRuleEverywhere(g, "DropUnreadDequantize", DropUnreadDequantize));
  // After the unread DQs went: a cone's values must have no reader outside it.
  return RunRuleEverywhere(g, "FuseByteCone", FuseByteCone);
}

}  // namespace onnxflow::graph
