#include "graph/gated_ffn.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "graph/fusion.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/node_attributes.h"
#include "ops/math/gated_activation.h"

namespace onnxflow::graph {
namespace {

// Columns [col0, col0 + cols) of a product's weights and bias: the whole of one of the two
// products, or one half of Phi-3's single product.
struct Half {
  Id product = kNone;
  std::string x;
  const Tensor* w = nullptr;     // [K, N], float or 16-bit
  const Tensor* bias = nullptr;  // [N], or null
  int64_t col0 = 0, cols = 0;
};

// MatMul(x, W) or FusedMatMul(x, W[, b]) of a constant W [K, N] (float, or a half model's 16-bit
// weights) and a constant bias: fills `h` (all N columns) and the product's epilogue.
bool ProductOf(const Graph& g, Id p, Half* h, FusedActivationSpec* epilogue) {
  if (p == kNone) return false;
  const Node& node = g.nodes[p];
  const auto& n = *node.proto;
  const bool matmul = IsOp(node, "MatMul") && n.input_size() == 2;
  const bool fused = IsInternal(node, internal_ops::kFusedMatMul) && (n.input_size() == 2 || n.input_size() == 3);
  if ((!matmul && !fused) || n.output_size() != 1 || !IsFloatProduct(g, node)) return false;
  const Tensor* w = WeightConstant(g, n, 1);
  if (w == nullptr || w->rank() != 2 || w->dim(0) < 1 || w->dim(1) < 1) return false;
  const Tensor* bias = nullptr;
  if (fused && HasInput(n, 2)) {
    bias = WeightConstant(g, n, 2);
    if (bias == nullptr || bias->rank() != 1 || bias->size() != w->dim(1)) return false;
  }
  *epilogue = FusedActivationSpec{};
  if (fused) {
    Result<FusedActivationSpec> spec = FusedActivationSpec::Parse(KernelInfo(n, node.opset, {}, {}, {}));
    if (!spec.ok()) return false;
    *epilogue = *spec;
  }
  *h = Half{p, n.input(0), w, bias, 0, w->dim(1)};
  return true;
}

// The gate a product's epilogue computes (FuseSwish, FuseGelu, FuseActivation made it).
bool GateOfEpilogue(const ActivationSpec& a, GatedActivationSpec* spec) {
  switch (a.kind) {
    case Activation::kSwish: *spec = {ActOp::kSwish, 1.0f}; return true;
    case Activation::kGelu: *spec = {ActOp::kGelu}; return true;
    case Activation::kSigmoid: *spec = {ActOp::kSigmoid}; return true;
    case Activation::kRelu: *spec = {ActOp::kRelu}; return true;
    case Activation::kTanh: *spec = {ActOp::kTanh}; return true;
    default: return false;
  }
}

// value = act(pre), the activation's nodes read by the Mul alone.
struct GateNodes {
  GatedActivationSpec spec;
  std::string pre;
  std::vector<Id> nodes;
  int pre_reads = 1;  // reads of `pre` by the activation (2 for x * Sigmoid(x))
};

bool GateNodeOf(const Graph& g, const std::string& value, GateNodes* gate) {
  const Id a = SoleReaderProducer(g, value);
  if (a == kNone) return false;
  const Node& node = g.nodes[a];
  const auto& n = *node.proto;
  if (n.output_size() != 1 || n.input_size() < 1 || n.input(0).empty()) return false;
  const bool one_input = n.input_size() == 1;
  GatedActivationSpec& s = gate->spec;
  gate->pre = n.input(0);
  gate->nodes = {a};
  gate->pre_reads = 1;
  if (IsMs(node, "FastGelu") && (one_input || (n.input_size() == 2 && n.input(1).empty()))) {
    s = {ActOp::kGeluTanh};
  } else if (IsMs(node, "Gelu") && one_input) {
    s = {ActOp::kGelu};
  } else if (IsMs(node, "QuickGelu") && one_input) {
    const auto* alpha = Attr(n, "alpha");
    s = {ActOp::kSwish, alpha != nullptr ? alpha->f() : 1.702f};
  } else if (IsOp(node, "Gelu") && node.opset >= 20 && one_input) {
    const auto* approximate = Attr(n, "approximate");
    const std::string form = approximate != nullptr ? approximate->s() : "none";
    if (form != "none" && form != "tanh") return false;
    s = {form == "tanh" ? ActOp::kGeluTanh : ActOp::kGelu};
  } else if (IsOp(node, "Swish") && node.opset >= 24 && one_input) {
    const auto* alpha = Attr(n, "alpha");
    s = {ActOp::kSwish, alpha != nullptr ? alpha->f() : 1.0f};
  } else if ((IsOp(node, "Sigmoid") || IsOp(node, "Tanh") || IsOp(node, "Relu")) && node.opset >= 6 && one_input) {
    s = {IsOp(node, "Sigmoid") ? ActOp::kSigmoid : IsOp(node, "Tanh") ? ActOp::kTanh : ActOp::kRelu};
  } else if (IsOp(node, "Mul") && node.opset >= 7 && n.input_size() == 2) {
    // x * Sigmoid(x) written out: after a Split no product took it as its epilogue.
    for (int side = 0; side < 2; ++side) {
      const Id sigmoid = SoleReaderProducer(g, n.input(side));
      if (sigmoid == kNone || !IsOp(g.nodes[sigmoid], "Sigmoid") ||
          g.nodes[sigmoid].proto->input(0) != n.input(1 - side)) {
        continue;
      }
      s = {ActOp::kSwish, 1.0f};
      gate->pre = n.input(1 - side);
      gate->nodes.push_back(sigmoid);
      gate->pre_reads = 2;
      return true;
    }
    return false;
  } else {
    return false;
  }
  return true;
}

// `value` as one part of a product P cut along its last axis: an output of Split(P, axis -1) into
// two parts, or Slice(P, start, end, axes [-1]) (steps 1). The columns are resolved against P's
// width later (Resolve).
struct Cut {
  Id node = kNone;
  std::string p;
  int64_t part = -1;                // Split: which output
  int64_t size0 = -1, size1 = -1;   // Split: the parts' sizes when given
  int64_t start = 0, end = 0;       // Slice
  bool slice = false;
};

bool CutOf(const Graph& g, const std::string& value, int reads, Cut* cut) {
  const Id c = ProducerReadBy(g, value, reads);
  if (c == kNone) return false;
  const Node& node = g.nodes[c];
  const auto& n = *node.proto;
  *cut = Cut{};
  cut->node = c;
  if (n.input_size() < 1 || n.input(0).empty()) return false;
  cut->p = n.input(0);
  if (IsOp(node, "Split")) {
    if (n.output_size() != 2 || n.output(0).empty() || n.output(1).empty() || IntAttr(n, "axis", 0) != -1) return false;
    cut->part = n.output(0) == value ? 0 : 1;
    std::vector<int64_t> sizes;
    if (node.opset >= 13) {
      if (HasInput(n, 1)) {
        sizes = Int64Constant(g, n.input(1));
        if (sizes.empty()) return false;
      }
      if (const auto* parts = Attr(n, "num_outputs"); parts != nullptr && parts->i() != 2) return false;
    } else if (const auto* split = Attr(n, "split"); split != nullptr) {
      sizes.assign(split->ints().begin(), split->ints().end());
    }
    if (!sizes.empty()) {
      if (sizes.size() != 2) return false;
      cut->size0 = sizes[0];
      cut->size1 = sizes[1];
    }
    return true;
  }
  if (IsOp(node, "Slice") && node.opset >= 10 && n.output_size() == 1 && n.input_size() >= 4) {
    const std::vector<int64_t> starts = Int64Constant(g, n.input(1)), ends = Int64Constant(g, n.input(2));
    const std::vector<int64_t> axes = Int64Constant(g, n.input(3));
    if (starts.size() != 1 || ends.size() != 1 || axes != std::vector<int64_t>{-1}) return false;
    if (HasInput(n, 4) && Int64Constant(g, n.input(4)) != std::vector<int64_t>{1}) return false;
    cut->slice = true;
    cut->start = starts[0];
    cut->end = ends[0];
    return true;
  }
  return false;
}

// The columns `cut` takes of a product of width n: true when they are the left or the right half.
bool Resolve(const Cut& cut, int64_t n, Half* h) {
  if (n % 2 != 0) return false;
  const int64_t f = n / 2;
  int64_t start = 0, end = 0;
  if (cut.slice) {
    start = cut.start < 0 ? cut.start + n : cut.start;
    end = cut.end < 0 ? cut.end + n : std::min(cut.end, n);
  } else {
    if (cut.size0 >= 0 && (cut.size0 != f || cut.size1 != f)) return false;
    start = cut.part * f;
    end = start + f;
  }
  if (!((start == 0 && end == f) || (start == f && end == n))) return false;
  h->col0 = start;
  h->cols = f;
  return true;
}

// Two runs of `cols` columns side by side, row by row: of [K, N] matrices -> [K, 2 cols] (`rows`
// K), or of [N] vectors -> [2 cols] (`rows` 0), each part from its column col0 on, in the parts'
// element type (a half model's weights stay 16-bit for the GEMM to widen). A null part is zeros (a
// bias only one of the products has).
Tensor Columns(DataType type, const std::pair<const Tensor*, int64_t> (&parts)[2], int64_t rows, int64_t cols) {
  Tensor out(type, rows > 0 ? Shape{rows, 2 * cols} : Shape{2 * cols});
  const size_t element = ElementSize(type), bytes = static_cast<size_t>(cols) * element;
  auto* o = static_cast<unsigned char*>(out.mutable_raw_data());
  for (int64_t r = 0; r < std::max<int64_t>(rows, 1); ++r) {
    for (const auto& [t, col0] : parts) {
      if (t == nullptr) {
        std::memset(o, 0, bytes);
      } else {
        const int64_t width = t->dim(t->rank() - 1);
        std::memcpy(o, static_cast<const unsigned char*>(t->raw_data()) + (r * width + col0) * element, bytes);
      }
      o += bytes;
    }
  }
  return out;
}

// The Mul's gate operand and up operand, matched.
std::optional<Patch> Match(Rewriter& r, Id mul_id, const std::string& gate_value, const std::string& up_value) {
  const Graph& g = r.graph();
  std::vector<Id> replaced;
  Half gate, up;
  GatedActivationSpec spec;
  FusedActivationSpec epilogue;
  std::string pre;
  int pre_reads = 1;
  if (ProductOf(g, SoleReaderProducer(g, gate_value), &gate, &epilogue) &&
      epilogue.activation.kind != Activation::kNone) {
    // The gate's product applies the activation in its epilogue already.
    if (!GateOfEpilogue(epilogue.activation, &spec)) return std::nullopt;
  } else {
    GateNodes nodes;
    if (!GateNodeOf(g, gate_value, &nodes)) return std::nullopt;
    spec = nodes.spec;
    pre = nodes.pre;
    pre_reads = nodes.pre_reads;
    replaced = nodes.nodes;
  }
  if (!GatedActivationSpec::Supported(spec.op)) return std::nullopt;

  const Id up_product = SoleReaderProducer(g, up_value);
  Cut gate_cut, up_cut;
  if (pre.empty() || ProductOf(g, ProducerReadBy(g, pre, pre_reads), &gate, &epilogue)) {
    // Two products: the up one plain (no epilogue), of the same x.
    FusedActivationSpec up_epilogue;
    if (!pre.empty() && epilogue.activation.kind != Activation::kNone) return std::nullopt;
    if (!ProductOf(g, up_product, &up, &up_epilogue) || up_epilogue.activation.kind != Activation::kNone ||
        up.product == gate.product) {
      return std::nullopt;
    }
    replaced.push_back(gate.product);
    replaced.push_back(up.product);
  } else if (CutOf(g, pre, pre_reads, &gate_cut) && CutOf(g, up_value, 1, &up_cut) && gate_cut.p == up_cut.p) {
    // One product cut in two halves (Phi-3): one Split, or two Slices, alone reading it.
    const bool split = gate_cut.node == up_cut.node && !gate_cut.slice && gate_cut.part != up_cut.part;
    const bool slices = gate_cut.slice && up_cut.slice && gate_cut.node != up_cut.node;
    if (!split && !slices) return std::nullopt;
    const Id p = ProducerReadBy(g, gate_cut.p, split ? 1 : 2);
    if (!ProductOf(g, p, &gate, &epilogue) || epilogue.activation.kind != Activation::kNone) return std::nullopt;
    up = gate;
    if (!Resolve(gate_cut, gate.w->dim(1), &gate) || !Resolve(up_cut, up.w->dim(1), &up) || gate.col0 == up.col0) {
      return std::nullopt;
    }
    replaced.push_back(p);
    replaced.push_back(gate_cut.node);
    if (slices) replaced.push_back(up_cut.node);
  } else {
    return std::nullopt;
  }
  // One x, one K, one F, one weight type (and one bias type).
  if (gate.x != up.x || gate.w->dim(0) != up.w->dim(0) || gate.cols != up.cols || gate.w->dtype() != up.w->dtype() ||
      (gate.bias != nullptr && up.bias != nullptr && gate.bias->dtype() != up.bias->dtype())) {
    return std::nullopt;
  }

  const auto& mul = *r[mul_id].proto;
  const int64_t k = gate.w->dim(0), f = gate.cols;
  const std::string product_out = r.FreshName(mul.output(0) + "/gate_up");
  const std::string weights = r.FreshName(product_out + "_weights");
  Patch patch{replaced, {}, {}};
  patch.replaced.push_back(mul_id);
  patch.constants.push_back({weights, Columns(gate.w->dtype(), {{gate.w, gate.col0}, {up.w, up.col0}}, k, f)});
  const Tensor* any_bias = gate.bias != nullptr ? gate.bias : up.bias;
  const Node& base = r[gate.product];
  auto product = std::make_shared<onnx::NodeProto>(*base.proto);
  product->set_input(0, gate.x);
  product->set_input(1, weights);
  FusedActivationSpec{}.WriteTo(*product);  // the gate's activation moves to GatedActivation
  if (any_bias != nullptr) {
    const std::string bias = r.FreshName(product_out + "_bias");
    patch.constants.push_back({bias, Columns(any_bias->dtype(), {{gate.bias, gate.col0}, {up.bias, up.col0}}, 0, f)});
    if (product->input_size() < 3) product->add_input("");
    product->set_input(2, bias);
  }
  product->set_output(0, product_out);
  const bool to_fused = any_bias != nullptr || base.domain == kOnnxflowDomain;
  patch.AddAt(to_fused ? InternalNode(base, std::move(product), internal_ops::kFusedMatMul)
                       : WithProto(base, std::move(product)),
              gate.product);
  patch.types.push_back({product_out, DataType::kFloat});

  auto gated = std::make_shared<onnx::NodeProto>();
  gated->set_name(mul.name());
  gated->add_input(product_out);
  gated->add_output(mul.output(0));
  spec.WriteTo(*gated);
  patch.AddAt(InternalNode(r[mul_id], std::move(gated), internal_ops::kGatedActivation), mul_id);
  return patch;
}

}  // namespace

std::optional<Patch> FuseGatedFeedForward(Rewriter& r, Id id) {
  const Node& mul = r[id];
  const auto& m = *mul.proto;
  if (!IsOp(mul, "Mul") || mul.opset < 7 || m.input_size() != 2 || m.output_size() != 1 || m.input(0) == m.input(1)) {
    return std::nullopt;
  }
  for (int side = 0; side < 2; ++side) {
    if (std::optional<Patch> patch = Match(r, id, m.input(side), m.input(1 - side))) return patch;
  }
  return std::nullopt;
}

}  // namespace onnxflow::graph
