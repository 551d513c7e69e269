#include "graph/sibling_matmul_fusion.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/fusion_util.h"
#include "ops/framework/internal_ops.h"

namespace onnxflow::graph {
namespace {

// A product x * W (+ bias) this rule can widen: MatMul, or a FusedMatMul that took only its bias,
// with W a float constant matrix and the bias, when there is one, a float constant of W's width.
struct Product {
  Id id = kNone;
  const Tensor* weight = nullptr;
  const Tensor* bias = nullptr;
};

bool AsProduct(const Graph& g, Id id, Product* p) {
  const Node& n = g.nodes[id];
  const auto& pr = *n.proto;
  const bool fused = n.domain == kOnnxflowDomain && n.op_type() == internal_ops::kFusedMatMul && !HasEpilogue(n);
  if (!(IsOp(n, "MatMul") || fused) || pr.output_size() != 1 || pr.input_size() < 2 || pr.input_size() > 3) {
    return false;
  }
  const Tensor* w = FloatConstant(g, pr, 1);
  if (w == nullptr || w->rank() != 2 || w->dim(1) == 0 || !IsFloatProduct(g, n)) return false;
  const Tensor* bias = nullptr;
  if (pr.input_size() == 3) {
    bias = FloatConstant(g, pr, 2);
    if (bias == nullptr || bias->rank() != 1 || bias->size() != w->dim(1)) return false;
  }
  *p = {id, w, bias};
  return true;
}

// The columns of each matrix side by side (all of height k).
Tensor SideBySide(const std::vector<const Tensor*>& parts, int64_t k) {
  int64_t width = 0;
  for (const Tensor* t : parts) width += t->dim(1);
  Tensor out(DataType::kFloat, {k, width});
  float* o = out.mutable_data<float>();
  for (int64_t row = 0; row < k; ++row) {
    for (const Tensor* t : parts) {
      const int64_t n = t->dim(1);
      std::memcpy(o, t->data<float>() + row * n, n * sizeof(float));
      o += n;
    }
  }
  return out;
}

// Where `id` stands in the graph's topological order.
int PositionOf(const Graph& g, Id id) {
  g.nodes.Order();  // brings the positions up to date
  return g.nodes.dag()[id].position;
}

}  // namespace

std::optional<Patch> FuseSiblingMatMuls(Rewriter& r, Id id) {
  const Graph& g = r.graph();
  Product first;
  if (!AsProduct(g, id, &first)) return std::nullopt;
  const std::string& x = r[id].proto->input(0);
  const int64_t k = first.weight->dim(0);
  std::vector<Product> siblings;
  for (Id reader : g.nodes.Readers(x)) {
    Product p;
    if (AsProduct(g, reader, &p) && g.nodes[reader].proto->input(0) == x && p.weight->dim(0) == k &&
        std::none_of(siblings.begin(), siblings.end(), [&](const Product& s) { return s.id == reader; })) {
      siblings.push_back(p);
    }
  }
  // Once per group: at its first member in the graph's order.
  if (siblings.size() < 2 || std::any_of(siblings.begin(), siblings.end(), [&](const Product& s) {
        return PositionOf(g, s.id) < PositionOf(g, id);
      })) {
    return std::nullopt;
  }
  std::sort(siblings.begin(), siblings.end(),
            [&](const Product& a, const Product& b) { return PositionOf(g, a.id) < PositionOf(g, b.id); });

  std::vector<const Tensor*> weights;
  std::vector<int64_t> widths;
  bool any_bias = false;
  for (const Product& s : siblings) {
    weights.push_back(s.weight);
    widths.push_back(s.weight->dim(1));
    any_bias = any_bias || s.bias != nullptr;
  }
  Patch patch;
  const std::string base = r[id].proto->output(0);
  const std::string weight = r.FreshName(base + "_siblings_weight"), wide = r.FreshName(base + "_siblings");
  patch.constants.push_back({weight, SideBySide(weights, k)});
  auto product = std::make_shared<onnx::NodeProto>();
  product->set_name(r[id].proto->name());
  product->add_input(x);
  product->add_input(weight);
  if (any_bias) {
    std::vector<Tensor> rows;  // each bias as a 1 x n matrix, zeros where a sibling had none
    std::vector<const Tensor*> parts;
    rows.reserve(siblings.size());
    for (const Product& s : siblings) {
      Tensor row(DataType::kFloat, {1, s.weight->dim(1)});
      if (s.bias != nullptr) std::memcpy(row.mutable_data<float>(), s.bias->data<float>(), row.size() * sizeof(float));
      rows.push_back(std::move(row));
      parts.push_back(&rows.back());
    }
    Tensor bias = SideBySide(parts, 1);
    const std::string bias_name = r.FreshName(base + "_siblings_bias");
    patch.constants.push_back({bias_name, Tensor(DataType::kFloat, {bias.size()}, bias.storage(), bias.mutable_raw_data())});
    product->add_input(bias_name);
  }
  product->add_output(wide);
  patch.added.push_back(InternalNode(r[id], std::move(product), internal_ops::kFusedMatMul));
  patch.types.push_back({wide, DataType::kFloat});

  const std::string sizes = r.FreshName(base + "_siblings_split");
  patch.constants.push_back({sizes, Tensor::FromVector<int64_t>({static_cast<int64_t>(widths.size())}, widths)});
  auto split = std::make_shared<onnx::NodeProto>();
  split->set_op_type("Split");
  split->set_name(r[id].proto->name() + "_split");
  split->add_input(wide);
  split->add_input(sizes);
  for (const Product& s : siblings) {
    split->add_output(g.nodes[s.id].proto->output(0));
    patch.replaced.push_back(s.id);
  }
  SetIntAttr(split.get(), "axis", -1);
  Node split_node = WithProto(r[id], std::move(split));
  split_node.domain.clear();
  split_node.opset = 18;  // split sizes as an input
  patch.added.push_back(std::move(split_node));
  return patch;
}

}  // namespace onnxflow::graph
