#include "graph/norm_fusion.h"

#include <memory>
#include <string>

#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"

namespace onnxflow::graph {
namespace {

// The producer of `value` when it is an op of type `op` and `readers` reads of the value are
// all there are; kNone otherwise.
Id ProducerOf(const Graph& g, const std::string& value, const char* op, int readers) {
  const Id p = ProducerReadBy(g, value, readers);
  return p != kNone && IsOp(g.nodes[p], op) ? p : kNone;
}

// ReduceMean over the last axis only, keeping it (the attribute before opset 18, the input after).
bool MeanOverLastAxis(const Graph& g, const Node& node) {
  const auto& n = *node.proto;
  if (const auto* keep = Attr(n, "keepdims"); keep != nullptr && keep->i() != 1) return false;
  if (node.opset < 18) {
    const auto* axes = Attr(n, "axes");
    return n.input_size() == 1 && axes != nullptr && axes->ints_size() == 1 && axes->ints(0) == -1;
  }
  if (n.input_size() != 2) return false;
  auto axes = g.constants.find(n.input(1));
  return axes != g.constants.end() && axes->second.dtype() == DataType::kInt64 && axes->second.size() == 1 &&
         axes->second.data<int64_t>()[0] == -1;
}

// The float constant vector operand of a two-input `op` whose other operand is `value`.
const Tensor* VectorOperand(const Graph& g, const Node& node, const char* op, const std::string& value) {
  const auto& n = *node.proto;
  if (!IsOp(node, op) || node.opset < 7 || n.input_size() != 2 || n.output_size() != 1) return nullptr;
  for (int i = 0; i < 2; ++i) {
    const Tensor* t = FloatConstant(g, n, 1 - i);
    if (n.input(i) == value && t != nullptr && t->rank() == 1) return t;
  }
  return nullptr;
}

// A float constant of one element equal to 1.
bool IsConstantOne(const Graph& g, const std::string& name) {
  auto c = g.constants.find(name);
  return c != g.constants.end() && c->second.size() == 1 && c->second.dtype() == DataType::kFloat &&
         c->second.data<float>()[0] == 1.0f;
}

bool IsConstantTwo(const Graph& g, const std::string& name) {
  auto c = g.constants.find(name);
  if (c == g.constants.end() || c->second.size() != 1) return false;
  const Tensor& t = c->second;
  switch (t.dtype()) {
    case DataType::kFloat: return t.data<float>()[0] == 2.0f;
    case DataType::kInt64: return t.data<int64_t>()[0] == 2;
    case DataType::kInt32: return t.data<int32_t>()[0] == 2;
    default: return false;
  }
}

// The root mean square of x behind `rs` (RMSNorm's of x, LayerNormalization's of x - mean):
// Sqrt(Add(ReduceMean(Pow(x, 2) or Mul(x, x), last axis), epsilon)), each value read only inside
// the pattern; the nodes go to `nodes` (the square first).
bool RootMeanSquareOf(const Graph& g, const std::string& rs, const std::string& x, std::vector<Id>* nodes,
                      float* epsilon) {
  const Id sqrt = ProducerOf(g, rs, "Sqrt", 1);
  if (sqrt == kNone) return false;
  const Id add = ProducerOf(g, g.nodes[sqrt].proto->input(0), "Add", 1);
  if (add == kNone || g.nodes[add].opset < 7 || g.nodes[add].proto->input_size() != 2) return false;
  const auto& ae = *g.nodes[add].proto;
  const int var_at = FloatConstant(g, ae, 1) != nullptr ? 0 : 1;
  const Tensor* eps = FloatConstant(g, ae, 1 - var_at);
  if (eps == nullptr || eps->size() != 1) return false;
  const Id var = ProducerOf(g, ae.input(var_at), "ReduceMean", 1);
  if (var == kNone || !MeanOverLastAxis(g, g.nodes[var])) return false;
  const std::string& squares = g.nodes[var].proto->input(0);
  Id square = ProducerOf(g, squares, "Pow", 1);
  if (square != kNone) {
    if (g.nodes[square].proto->input(0) != x || !IsConstantTwo(g, g.nodes[square].proto->input(1))) return false;
  } else {
    square = ProducerOf(g, squares, "Mul", 1);
    if (square == kNone || g.nodes[square].proto->input_size() != 2 || g.nodes[square].proto->input(0) != x ||
        g.nodes[square].proto->input(1) != x) {
      return false;
    }
  }
  *epsilon = eps->data<float>()[0];
  nodes->insert(nodes->end(), {square, var, add, sqrt});
  return true;
}

}  // namespace

std::optional<Patch> FuseRmsNormalization(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& scale_mul = r[index];
  const auto& sm = *scale_mul.proto;
  if (!IsOp(scale_mul, "Mul") || sm.input_size() != 2) return std::nullopt;
  std::string normalized;
  const Tensor* weight = nullptr;
  for (int i = 0; i < 2 && weight == nullptr; ++i) {
    weight = VectorOperand(g, scale_mul, "Mul", sm.input(i));
    if (weight != nullptr) normalized = sm.input(i);
  }
  if (weight == nullptr || weight->size() < 2) return std::nullopt;  // a scalar would broadcast
  // normalized = Div(x, rs), or Mul(x, Reciprocal(rs)) in either order.
  std::vector<Id> nodes;
  std::string x, rs;
  if (const Id div = ProducerOf(g, normalized, "Div", 1); div != kNone) {
    if (r[div].opset < 7 || r[div].proto->input_size() != 2) return std::nullopt;
    x = r[div].proto->input(0);
    rs = r[div].proto->input(1);
    nodes.push_back(div);
  } else if (const Id mul = ProducerOf(g, normalized, "Mul", 1); mul != kNone) {
    const auto& m = *r[mul].proto;
    if (r[mul].opset < 7 || m.input_size() != 2) return std::nullopt;
    // The reciprocal is Reciprocal(rs), or Div(1, rs): torch exports rsqrt so (T5's and LLaMA's
    // hidden * torch.rsqrt(variance + eps)).
    for (int i = 0; i < 2 && rs.empty(); ++i) {
      if (const Id rec = ProducerOf(g, m.input(i), "Reciprocal", 1); rec != kNone) {
        rs = r[rec].proto->input(0);
        x = m.input(1 - i);
        nodes.push_back(rec);
      } else if (const Id one_over = ProducerOf(g, m.input(i), "Div", 1);
                 one_over != kNone && r[one_over].opset >= 7 && r[one_over].proto->input_size() == 2 &&
                 IsConstantOne(g, r[one_over].proto->input(0))) {
        rs = r[one_over].proto->input(1);
        x = m.input(1 - i);
        nodes.push_back(one_over);
      }
    }
    if (rs.empty()) return std::nullopt;
    nodes.push_back(mul);
  } else {
    return std::nullopt;
  }
  float epsilon = 0.0f;
  if (!RootMeanSquareOf(g, rs, x, &nodes, &epsilon) || KnownType(g, x) != DataType::kFloat) return std::nullopt;
  nodes.push_back(index);

  auto fused = std::make_shared<onnx::NodeProto>();
  fused->set_op_type("SimplifiedLayerNormalization");
  fused->set_name(sm.name());
  fused->add_input(x);
  fused->add_input(sm.input(0) == normalized ? sm.input(1) : sm.input(0));
  fused->add_output(sm.output(0));
  SetIntAttr(fused.get(), "axis", -1);
  SetFloatAttr(fused.get(), "epsilon", epsilon);
  Node node = WithProto(scale_mul, std::move(fused));
  node.domain.clear();
  return Patch{nodes, {std::move(node)}, {}};
}

std::optional<Patch> FuseLayerNormalization(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& div = r[index];
  const auto& dv = *div.proto;
  if (!IsOp(div, "Div") || div.opset < 7 || dv.input_size() != 2 || dv.output_size() != 1) return std::nullopt;
  // Backwards from Div(d, sqrt): Sqrt(Add(var, epsilon)), var = ReduceMean(d * d), d = Sub(x, mean).
  // The root mean square of d behind the Div, d read by its square and the Div.
  const std::string& d = dv.input(0);
  std::vector<Id> moments;  // square, ReduceMean, Add(epsilon), Sqrt
  float epsilon = 0.0f;
  if (!RootMeanSquareOf(g, dv.input(1), d, &moments, &epsilon)) return std::nullopt;
  const int d_readers = IsOp(r[moments[0]], "Pow") ? 2 : 3;  // Pow(d, 2) or Mul(d, d), and the Div
  const Id sub = ProducerOf(g, d, "Sub", d_readers);
  if (sub == kNone || r[sub].opset < 7 || r[sub].proto->input_size() != 2) return std::nullopt;
  const std::string& x = r[sub].proto->input(0);
  const Id mean = ProducerOf(g, r[sub].proto->input(1), "ReduceMean", 1);
  if (mean == kNone || r[mean].proto->input(0) != x || !MeanOverLastAxis(g, r[mean])) return std::nullopt;

  // Forwards: Mul by the scale, then (optionally) Add the bias.
  const Id scale_mul = SoleReader(g, dv.output(0));
  if (scale_mul == kNone) return std::nullopt;
  const Tensor* scale = VectorOperand(g, r[scale_mul], "Mul", dv.output(0));
  if (scale == nullptr) return std::nullopt;
  Id last = scale_mul;
  std::string bias;
  const std::string& scaled = r[scale_mul].proto->output(0);
  if (const Id add_bias = SoleReader(g, scaled); add_bias != kNone) {
    const Tensor* b = VectorOperand(g, r[add_bias], "Add", scaled);
    if (b != nullptr && b->size() == scale->size()) {
      last = add_bias;
      const auto& ab = *r[add_bias].proto;
      bias = ab.input(0) == scaled ? ab.input(1) : ab.input(0);
    }
  }
  const auto& sm = *r[scale_mul].proto;

  auto fused = std::make_shared<onnx::NodeProto>();
  fused->set_op_type("LayerNormalization");
  fused->set_name(r[last].proto->name());
  fused->add_input(x);
  fused->add_input(sm.input(0) == dv.output(0) ? sm.input(1) : sm.input(0));
  if (!bias.empty()) fused->add_input(bias);
  fused->add_output(r[last].proto->output(0));
  SetIntAttr(fused.get(), "axis", -1);
  SetFloatAttr(fused.get(), "epsilon", epsilon);
  Node node = WithProto(r[last], std::move(fused));
  node.domain.clear();
  node.opset = 17;
  Patch patch{{mean, sub}, {std::move(node)}, {}};
  patch.replaced.insert(patch.replaced.end(), moments.begin(), moments.end());
  patch.replaced.insert(patch.replaced.end(), {index, scale_mul});
  if (last != scale_mul) patch.replaced.push_back(last);
  return patch;
}

std::optional<Patch> FuseSkipLayerNormalization(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& ln = r[index];
  const auto& n = *ln.proto;
  const bool rms = IsOp(ln, "SimplifiedLayerNormalization") ||
                   IsMs(ln, "SimplifiedLayerNormalization");
  if (!(rms || (IsOp(ln, "LayerNormalization") && ln.opset >= 17)) || n.input_size() < 2 || n.output_size() < 1) {
    return std::nullopt;
  }
  for (int i = 1; i < n.output_size(); ++i) {
    if (!n.output(i).empty() && g.nodes.ReadCount(n.output(i)) != 0) return std::nullopt;
  }
  const auto* axis = Attr(n, "axis");
  if (axis != nullptr && axis->i() != -1) return std::nullopt;
  // stash_type 1 (the default) computes the moments in float, as the fused kernel does.
  if (const auto* stash = Attr(n, "stash_type"); stash != nullptr && stash->i() != 1) return std::nullopt;
  const Id add = g.nodes.Producer(n.input(0));
  if (add == kNone || !IsOp(r[add], "Add") || r[add].opset < 7) return std::nullopt;
  const auto& a = *r[add].proto;
  if (a.input_size() != 2 || a.output_size() != 1 || KnownType(g, a.output(0)) != DataType::kFloat) return std::nullopt;
  for (int i = 1; i < n.input_size(); ++i) {
    if (!n.input(i).empty() && KnownType(g, n.input(i)) != DataType::kFloat) return std::nullopt;
  }

  auto fused = std::make_shared<onnx::NodeProto>();
  fused->set_name(n.name());
  fused->add_input(a.input(0));
  fused->add_input(a.input(1));
  fused->add_input(n.input(1));
  if (!rms && n.input_size() > 2 && !n.input(2).empty()) fused->add_input(n.input(2));
  fused->add_output(n.output(0));
  // The sum is kept when anything besides this LayerNormalization reads it.
  if (g.nodes.ReadCount(a.output(0)) > 1) {
    fused->add_output("");
    fused->add_output("");
    fused->add_output(a.output(0));
  }
  const auto* epsilon = Attr(n, "epsilon");
  SetFloatAttr(fused.get(), "epsilon", epsilon != nullptr ? epsilon->f() : 1e-5f);
  if (rms) SetIntAttr(fused.get(), "rms", 1);
  return Patch{{add, index}, {InternalNode(ln, std::move(fused), internal_ops::kAddLayerNormalization)}, {}};
}

}  // namespace onnxflow::graph
