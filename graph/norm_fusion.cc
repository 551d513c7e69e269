#include "graph/norm_fusion.h"

#include <memory>
#include <string>

namespace onnxflow::graph {
namespace {

// The producer of `value` when it is an op of type `op` and `readers` reads of the value are
// all there are; -1 otherwise.
int ProducerOf(const Graph& g, const Uses& u, const std::string& value, const char* op, int readers,
               const std::vector<bool>& removed) {
  const int p = ProducerReadBy(u, value, readers);
  return p >= 0 && !removed[p] && IsOp(g.nodes[p], op) ? p : -1;
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

}  // namespace

bool FuseLayerNormalization(Graph* g, Uses& u, size_t index, std::vector<bool>* removed) {
  const Node& div = g->nodes[index];
  const auto& dv = *div.proto;
  if ((*removed)[index] || !IsOp(div, "Div") || div.opset < 7 || dv.input_size() != 2 || dv.output_size() != 1) {
    return false;
  }
  // Backwards from Div(d, sqrt): Sqrt(Add(var, epsilon)), var = ReduceMean(d * d), d = Sub(x, mean).
  const int sqrt = ProducerOf(*g, u, dv.input(1), "Sqrt", 1, *removed);
  if (sqrt < 0) return false;
  const int add_eps = ProducerOf(*g, u, g->nodes[sqrt].proto->input(0), "Add", 1, *removed);
  if (add_eps < 0 || g->nodes[add_eps].opset < 7 || g->nodes[add_eps].proto->input_size() != 2) return false;
  const auto& ae = *g->nodes[add_eps].proto;
  const int var_at = FloatConstant(*g, ae, 1) != nullptr ? 0 : 1;
  const Tensor* epsilon = FloatConstant(*g, ae, 1 - var_at);
  if (epsilon == nullptr || epsilon->size() != 1) return false;
  const int var = ProducerOf(*g, u, ae.input(var_at), "ReduceMean", 1, *removed);
  if (var < 0 || !MeanOverLastAxis(*g, g->nodes[var])) return false;
  const std::string& squares = g->nodes[var].proto->input(0);
  const std::string& d = dv.input(0);
  int square = ProducerOf(*g, u, squares, "Mul", 1, *removed);
  int d_readers = 3;  // Mul(d, d) and the Div
  if (square >= 0) {
    const auto& sq = *g->nodes[square].proto;
    if (sq.input_size() != 2 || sq.input(0) != d || sq.input(1) != d) return false;
  } else {
    square = ProducerOf(*g, u, squares, "Pow", 1, *removed);
    if (square < 0 || g->nodes[square].proto->input(0) != d || !IsConstantTwo(*g, g->nodes[square].proto->input(1))) {
      return false;
    }
    d_readers = 2;  // Pow(d, 2) and the Div
  }
  const int sub = ProducerOf(*g, u, d, "Sub", d_readers, *removed);
  if (sub < 0 || g->nodes[sub].opset < 7 || g->nodes[sub].proto->input_size() != 2) return false;
  const std::string& x = g->nodes[sub].proto->input(0);
  const int mean = ProducerOf(*g, u, g->nodes[sub].proto->input(1), "ReduceMean", 1, *removed);
  if (mean < 0 || g->nodes[mean].proto->input(0) != x || !MeanOverLastAxis(*g, g->nodes[mean])) return false;

  // Forwards: Mul by the scale, then (optionally) Add the bias.
  const int scale_mul = SoleReaderAfter(*g, u, dv.output(0), index);
  if (scale_mul < 0) return false;
  const Tensor* scale = VectorOperand(*g, g->nodes[scale_mul], "Mul", dv.output(0));
  if (scale == nullptr) return false;
  int last = scale_mul;
  std::string bias;
  const std::string& scaled = g->nodes[scale_mul].proto->output(0);
  if (const int add_bias = SoleReaderAfter(*g, u, scaled, scale_mul); add_bias >= 0) {
    const Tensor* b = VectorOperand(*g, g->nodes[add_bias], "Add", scaled);
    if (b != nullptr && b->size() == scale->size()) {
      last = add_bias;
      const auto& ab = *g->nodes[add_bias].proto;
      bias = ab.input(0) == scaled ? ab.input(1) : ab.input(0);
    }
  }
  const auto& sm = *g->nodes[scale_mul].proto;

  auto fused = std::make_shared<onnx::NodeProto>();
  fused->set_op_type("LayerNormalization");
  fused->set_name(g->nodes[last].proto->name());
  fused->add_input(x);
  fused->add_input(sm.input(0) == dv.output(0) ? sm.input(1) : sm.input(0));
  if (!bias.empty()) fused->add_input(bias);
  fused->add_output(g->nodes[last].proto->output(0));
  SetIntAttr(fused.get(), "axis", -1);
  SetFloatAttr(fused.get(), "epsilon", epsilon->data<float>()[0]);
  // The fused node takes the last one's place: x is computed before the pattern's first node,
  // and every reader of the output comes after its last.
  Node& node = g->nodes[last];
  node.proto = std::move(fused);
  node.domain.clear();
  node.opset = 17;
  for (int i : {mean, sub, square, var, add_eps, sqrt, static_cast<int>(index), scale_mul}) {
    if (i != last) (*removed)[i] = true;
  }
  u.producer[node.proto->output(0)] = last;
  return true;
}

}  // namespace onnxflow::graph
