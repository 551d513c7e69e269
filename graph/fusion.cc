#include "graph/fusion.h"

#include <cmath>
#include <algorithm>
#include <map>

#include "graph/attention_fusion.h"
#include "graph/qkv_merge.h"
#include "graph/chain_fusion.h"
#include "graph/dynamic_quant_fusion.h"
#include "graph/gated_ffn.h"
#include "graph/fusion_util.h"
#include "graph/hard_activation_fusion.h"
#include "graph/norm_fusion.h"
#include "graph/ort_saved_forms.h"
#include "graph/rewrite.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/numeric.h"
#include "ops/math/float_view.h"

namespace onnxflow::graph {

namespace {

// W' = W * s[c] for output channel c (W's axis 0). 16-bit weights (a half model's, which
// graph/half_compute.cc keeps for the convolution kernels to widen) stay 16-bit: each product is
// computed in float and rounded once, as ONNX Runtime folds a float16 model's BatchNormalization
// into its half weights (its ConvBNFusion scales the half initializer).
Tensor ScaledWeights(const Tensor& w, const std::vector<float>& s) {
  Tensor scaled = w.Clone();
  const int64_t channels = static_cast<int64_t>(s.size()), per_channel = w.size() / std::max<int64_t>(channels, 1);
  for (int64_t c = 0; c < channels; ++c) {
    const int64_t at = c * per_channel;
    if (w.dtype() == DataType::kFloat) {
      float* row = scaled.mutable_data<float>() + at;
      for (int64_t k = 0; k < per_channel; ++k) row[k] *= s[c];
    } else if (w.dtype() == DataType::kFloat16) {
      Float16* row = scaled.mutable_data<Float16>() + at;
      for (int64_t k = 0; k < per_channel; ++k) row[k].bits = FloatToHalf(HalfToFloat(row[k].bits) * s[c]);
    } else {
      BFloat16* row = scaled.mutable_data<BFloat16>() + at;
      for (int64_t k = 0; k < per_channel; ++k) row[k].bits = FloatToBFloat16(BFloat16ToFloat(row[k].bits) * s[c]);
    }
  }
  return scaled;
}

}  // namespace

// Conv -> BatchNormalization: W' = W * s, B' = (B - mean) * s + bias, s = scale / sqrt(var + eps).
std::optional<Patch> FoldBatchNorm(Rewriter& r, Id bn_id) {
  const Graph& g = r.graph();
  const Node& bn = r[bn_id];
  const auto& b = *bn.proto;
  if (!IsOp(bn, "BatchNormalization") || b.input_size() < 5) return std::nullopt;
  if (const auto* t = Attr(b, "training_mode"); t != nullptr && t->i() != 0) return std::nullopt;
  for (int k = 1; k < b.output_size(); ++k) {
    if (!b.output(k).empty()) return std::nullopt;
  }
  const Id p = SoleProducer(g, bn);
  if (p == kNone || !IsOp(r[p], "Conv")) return std::nullopt;
  const auto& conv = *r[p].proto;
  const Tensor* w = WeightConstant(g, conv, 1);
  const Tensor* scale = FloatConstant(g, b, 1);
  const Tensor* bias = FloatConstant(g, b, 2);
  const Tensor* mean = FloatConstant(g, b, 3);
  const Tensor* var = FloatConstant(g, b, 4);
  const bool has_b = conv.input_size() > 2 && !conv.input(2).empty();
  const Tensor* conv_b = has_b ? FloatConstant(g, conv, 2) : nullptr;
  if (!w || !scale || !bias || !mean || !var || (has_b && !conv_b) || w->rank() < 1) return std::nullopt;
  const int64_t channels = w->dim(0);
  for (const Tensor* t : {scale, bias, mean, var}) {
    if (t->size() != channels) return std::nullopt;
  }
  if (conv_b && conv_b->size() != channels) return std::nullopt;
  const float eps = Attr(b, "epsilon") ? Attr(b, "epsilon")->f() : 1e-5f;

  std::vector<float> s(static_cast<size_t>(channels));
  Tensor new_b(DataType::kFloat, {channels});
  for (int64_t c = 0; c < channels; ++c) {
    s[c] = scale->data<float>()[c] / std::sqrt(var->data<float>()[c] + eps);
    const float b0 = conv_b ? conv_b->data<float>()[c] : 0.0f;
    new_b.mutable_data<float>()[c] = (b0 - mean->data<float>()[c]) * s[c] + bias->data<float>()[c];
  }
  Tensor new_w = ScaledWeights(*w, s);
  const std::string base = b.output(0);
  const std::string weight = r.FreshName(base + "/folded_weight"), bias_name = r.FreshName(base + "/folded_bias");
  auto folded = std::make_shared<onnx::NodeProto>(conv);
  folded->set_input(1, weight);
  if (folded->input_size() < 3) folded->add_input("");
  folded->set_input(2, bias_name);
  folded->set_output(0, base);
  Patch patch{{p, bn_id}, {WithProto(r[p], std::move(folded))}, {}};
  patch.constants.emplace_back(weight, std::move(new_w));
  patch.constants.emplace_back(bias_name, std::move(new_b));
  return patch;
}

// Conv -> Mul / Add by a constant that scales or shifts each output channel (Caffe2's exports
// write a BatchNormalization's affine part this way, DenseNet's after every one): W' = W * s and
// B' = B * s for Mul, B' = B + b for Add. The weights' rank is the output's, so the constant's
// broadcast is known to be per channel.
std::optional<Patch> FoldChannelAffine(Rewriter& r, Id id) {
  const Graph& g = r.graph();
  const Node& op = r[id];
  const auto& n = *op.proto;
  const bool mul = IsOp(op, "Mul");
  if ((!mul && !IsOp(op, "Add")) || op.opset < 7 || n.input_size() != 2 || n.output_size() != 1) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const Tensor* constant = FloatConstant(g, n, 1 - i);
    const Id p = SoleReaderProducer(g, n.input(i));
    if (constant == nullptr || p == kNone || !IsOp(r[p], "Conv")) continue;
    const auto& conv = *r[p].proto;
    const Tensor* w = WeightConstant(g, conv, 1);
    const bool has_b = conv.input_size() > 2 && !conv.input(2).empty();
    const Tensor* conv_b = has_b ? FloatConstant(g, conv, 2) : nullptr;
    if (w == nullptr || w->rank() < 3 || conv.output_size() != 1 || (has_b && conv_b == nullptr)) continue;
    const int64_t channels = w->dim(0);
    const std::vector<float> values = PerChannelValues(*constant, w->rank(), channels);
    if (values.empty() || (conv_b != nullptr && conv_b->size() != channels)) continue;

    const std::string base = n.output(0);
    auto folded = std::make_shared<onnx::NodeProto>(conv);
    Patch patch{{p, id}, {}, {}};
    if (mul) {
      Tensor new_w = ScaledWeights(*w, values);
      const std::string weight = r.FreshName(base + "/folded_weight");
      patch.constants.emplace_back(weight, std::move(new_w));
      folded->set_input(1, weight);
    }
    if (!mul || conv_b != nullptr) {  // a Mul scales the bias; an Add makes one when there is none
      Tensor new_b(DataType::kFloat, {channels});
      for (int64_t c = 0; c < channels; ++c) {
        const float b0 = conv_b != nullptr ? conv_b->data<float>()[c] : 0.0f;
        new_b.mutable_data<float>()[c] = mul ? b0 * values[c] : b0 + values[c];
      }
      const std::string bias = r.FreshName(base + "/folded_bias");
      patch.constants.emplace_back(bias, std::move(new_b));
      if (folded->input_size() < 3) folded->add_input("");
      folded->set_input(2, bias);
    }
    folded->set_output(0, base);
    patch.added.push_back(WithProto(r[p], std::move(folded)));
    return patch;
  }
  return std::nullopt;
}

// Conv -> Add/Sum(conv, Z) (a residual connection): FusedConv with Z as a fourth input, added in
// the GEMM epilogue instead of in a pass of its own. Add's operands commute exactly, so either
// operand may be the convolution; Z must not depend on it (the convolution's sole reader is the
// sum), so the fused node cannot close a cycle.
std::optional<Patch> FuseResidual(Rewriter& r, Id sum_id) {
  const Graph& g = r.graph();
  const Node& sum = r[sum_id];
  const auto& s = *sum.proto;
  const bool is_add = IsOp(sum, "Add") && sum.opset >= 7;  // older Add broadcasts by attribute
  if (!(is_add || IsOp(sum, "Sum")) || s.input_size() != 2 || s.output_size() != 1) return std::nullopt;
  Id best = kNone;
  int best_input = -1;
  for (int i = 0; i < 2; ++i) {
    const Id p = SoleReaderProducer(g, s.input(i));
    if (p == kNone) continue;
    const Node& conv = r[p];
    if (!IsOp(conv, "Conv") || conv.proto->output_size() != 1 || !IsFloatProduct(g, conv)) continue;
    // The later convolution in the file: the earlier one has more time to produce Z.
    if (best == kNone || r.nodes().KeyOf(best) < r.nodes().KeyOf(p)) {
      best = p;
      best_input = i;
    }
  }
  if (best == kNone || s.input(0) == s.input(1)) return std::nullopt;
  auto node = std::make_shared<onnx::NodeProto>(*r[best].proto);
  while (node->input_size() < 3) node->add_input("");
  node->add_input(s.input(1 - best_input));
  node->set_output(0, s.output(0));
  return Patch{{best, sum_id}, {InternalNode(r[best], std::move(node), internal_ops::kFusedConv)}, {}};
}

// MatMul -> Add(product, bias), bias a float constant vector of B's N columns: FusedMatMul with
// the bias as a third input, added in the GEMM epilogue (a transformer's linear layers, where the
// Add was a pass of its own over every projection's output). B a constant matrix in float or kept
// in 16 bits (a half model's weights after ComputeHalfInFloat: its bias is widened, B is not). A bias of higher rank could broadcast
// the product to a new shape, so only a vector qualifies.
std::optional<Patch> FuseMatMulBias(Rewriter& r, Id add_id) {
  const Graph& g = r.graph();
  const Node& add = r[add_id];
  const auto& a = *add.proto;
  if (!IsOp(add, "Add") || add.opset < 7 || a.input_size() != 2 || a.output_size() != 1) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const Id p = SoleReaderProducer(g, a.input(i));
    if (p == kNone) continue;
    const Node& matmul = r[p];
    if (!IsOp(matmul, "MatMul") || matmul.proto->input_size() != 2 || matmul.proto->output_size() != 1) continue;
    const Tensor* w = WeightConstant(g, *matmul.proto, 1);
    const Tensor* bias = FloatConstant(g, a, 1 - i);
    if (w == nullptr || w->rank() != 2 || bias == nullptr || bias->rank() != 1 || bias->size() != w->dim(1)) continue;
    auto node = std::make_shared<onnx::NodeProto>(*matmul.proto);
    node->add_input(a.input(1 - i));
    node->set_output(0, a.output(0));
    return Patch{{p, add_id}, {InternalNode(matmul, std::move(node), internal_ops::kFusedMatMul)}, {}};
  }
  return std::nullopt;
}

namespace {

// Producer `p` (Conv, Gemm, MatMul, or a fused one without an activation yet) as the fused node
// that applies activation `spec` in its epilogue and writes `output`; nullopt for any other producer.
std::optional<Node> TakeActivation(const Graph& g, Id p, const std::string& output, const FusedActivationSpec& spec) {
  const Node& producer = g.nodes[p];
  // A residual FusedConv (below) has no activation yet: it takes this one after its sum.
  // So has a FusedMatMul that took its bias (FuseMatMulBias).
  const bool fused_without_activation = producer.domain == kFusedDomain && !HasEpilogue(producer);
  const bool residual_conv = fused_without_activation && producer.op_type() == internal_ops::kFusedConv;
  const bool biased_matmul = fused_without_activation && producer.op_type() == internal_ops::kFusedMatMul;
  const char* fused = IsOp(producer, "Conv") || residual_conv     ? internal_ops::kFusedConv
                      : IsOp(producer, "Gemm")                    ? internal_ops::kFusedGemm
                      : IsOp(producer, "MatMul") || biased_matmul ? internal_ops::kFusedMatMul
                                                                  : nullptr;
  if (fused == nullptr || producer.proto->output_size() != 1 || !IsFloatProduct(g, producer)) return std::nullopt;

  auto node = std::make_shared<onnx::NodeProto>(*producer.proto);
  node->set_output(0, output);
  spec.WriteTo(*node);
  return InternalNode(producer, std::move(node), fused);
}

}  // namespace

std::optional<Patch> FuseActivation(Rewriter& r, Id act_id) {
  const Graph& g = r.graph();
  const Node& act = r[act_id];
  FusedActivationSpec spec;
  if (!EpilogueOf(g, act, &spec)) return std::nullopt;
  const Id p = SoleProducer(g, act);
  if (p == kNone) return std::nullopt;
  std::optional<Node> fused = TakeActivation(g, p, act.proto->output(0), spec);
  if (!fused) return std::nullopt;
  return Patch{{p, act_id}, {std::move(*fused)}, {}};
}

// Swish (SiLU), y = x * Sigmoid(x), after a product: the Sigmoid and the Mul become the producer's
// epilogue activation "Swish" (EfficientNet's convolutions), one pass instead of three. x must be
// read by those two nodes only.
std::optional<Patch> FuseSwish(Rewriter& r, Id mul_id) {
  const Graph& g = r.graph();
  const Node& mul = r[mul_id];
  const auto& m = *mul.proto;
  if (!IsOp(mul, "Mul") || mul.opset < 7 || m.input_size() != 2 || m.output_size() != 1) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    const std::string& x = m.input(1 - i);
    const Id sigmoid = SoleReaderProducer(g, m.input(i));
    if (sigmoid == kNone || !IsOp(r[sigmoid], "Sigmoid") || r[sigmoid].proto->input(0) != x) continue;
    const Id producer = ProducerReadBy(g, x, 2);
    if (producer == kNone) continue;
    std::optional<Node> fused = TakeActivation(g, producer, m.output(0), FusedActivationSpec{{Activation::kSwish}});
    if (!fused) continue;
    return Patch{{producer, sigmoid, mul_id}, {std::move(*fused)}, {}};
  }
  return std::nullopt;
}


// GELU written out as PyTorch exports it, after a product x:
//   Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)   or   Mul(Mul(x, 0.5), Add(Erf(Div(x, sqrt 2)), 1))
//   or Mul(x, Mul(Add(Erf(Div(x, sqrt 2)), 1), 0.5))
// (operands of Add and Mul in either order, Div also as Mul by 1/sqrt 2): the producer applies it in
// its epilogue ("Gelu", the erf form), instead of an ElementwiseChain pass over BERT's 128 x 3072
// FFN activations. x must be read by those two nodes only.
std::optional<Patch> FuseGelu(Rewriter& r, Id mul_id) {
  const Graph& g = r.graph();
  const Node& last = r[mul_id];
  const auto& m = *last.proto;
  if (!IsOp(last, "Mul") || last.opset < 7 || m.input_size() != 2 || m.output_size() != 1) return std::nullopt;
  // Returns the Erf chain's x when `value` is Add(Erf(x / sqrt 2), 1), read once, collecting its nodes.
  auto one_plus_erf = [&](const std::string& value, std::vector<Id>* nodes) -> std::string {
    const Id add = SoleReaderProducer(g, value);
    if (add == kNone) return "";
    const std::string e = OtherThanConstant(g, r[add], "Add", 1.0f, true);
    const Id erf = e.empty() ? kNone : SoleReaderProducer(g, e);
    if (erf == kNone || !IsOp(r[erf], "Erf") || r[erf].proto->input_size() != 1) return "";
    const Id div = SoleReaderProducer(g, r[erf].proto->input(0));
    if (div == kNone) return "";
    std::string x = OtherThanConstant(g, r[div], "Div", 1.41421356f, false);
    if (x.empty()) x = OtherThanConstant(g, r[div], "Mul", 0.70710678f, true);
    if (x.empty()) return "";
    nodes->insert(nodes->end(), {add, erf, div});
    return x;
  };
  for (int side = 0; side < 2; ++side) {
    std::vector<Id> nodes;
    std::string x;
    const Id inner = SoleReaderProducer(g, m.input(side));
    if (inner == kNone) continue;
    // Form 1: last = Mul(inner, 0.5), inner = Mul(x, 1 + erf).
    if (ConstantNear(g, m, 1 - side, 0.5f) && IsOp(r[inner], "Mul") && r[inner].opset >= 7 &&
        r[inner].proto->input_size() == 2) {
      const auto& in = *r[inner].proto;
      for (int k = 0; k < 2 && x.empty(); ++k) {
        std::vector<Id> found;
        const std::string erf_x = one_plus_erf(in.input(1 - k), &found);
        if (!erf_x.empty() && erf_x == in.input(k)) {
          x = erf_x;
          nodes = found;
        }
      }
    } else if (const std::string halved = OtherThanConstant(g, r[inner], "Mul", 0.5f, true); !halved.empty()) {
      // Form 2: last = Mul(half, 1 + erf), half = Mul(x, 0.5), inner being either of them.
      std::vector<Id> found;
      if (const std::string erf_x = one_plus_erf(m.input(1 - side), &found); !erf_x.empty() && erf_x == halved) {
        x = erf_x;
        nodes = found;
      }
      // Form 3: last = Mul(x, cdf), cdf = Mul(1 + erf, 0.5): x * (0.5 * (1 + erf(x / sqrt 2))), as
      // BERT's gelu is often written (cdf = 0.5 * (1.0 + erf(x / sqrt(2.0))); return x * cdf).
      if (x.empty()) {
        found.clear();
        const std::string cdf_x = one_plus_erf(halved, &found);
        if (!cdf_x.empty() && cdf_x == m.input(1 - side)) {
          x = cdf_x;
          nodes = found;
        }
      }
    }
    if (x.empty()) continue;
    const Id producer = ProducerReadBy(g, x, 2);
    if (producer == kNone) continue;
    std::optional<Node> fused = TakeActivation(g, producer, m.output(0), FusedActivationSpec{{Activation::kGelu}});
    if (!fused) continue;
    Patch patch{{producer, inner, mul_id}, {std::move(*fused)}, {}};
    patch.replaced.insert(patch.replaced.end(), nodes.begin(), nodes.end());
    return patch;
  }
  return std::nullopt;
}

// GELU's tanh form written out, as GPT-2's gelu_new exports (constants on either side):
//   Mul(Mul(x, 0.5), Add(Tanh(Mul(Add(x, Mul(Pow(x, 3), 0.044715)), sqrt(2/pi))), 1))
//   or Mul(Mul(x, Add(Tanh(...), 1)), 0.5)
// becomes com.microsoft FastGelu(x), one vectorized pass instead of eight (Pow by a scalar powf
// each): the epilogues have no tanh-form GELU. Every node but x's producer is the pattern's alone.
std::optional<Patch> FuseGeluTanh(Rewriter& r, Id mul_id) {
  const Graph& g = r.graph();
  const Node& last = r[mul_id];
  const auto& m = *last.proto;
  if (!IsOp(last, "Mul") || last.opset < 7 || m.input_size() != 2 || m.output_size() != 1) return std::nullopt;
  std::vector<Id> nodes = {mul_id};
  // The producer of `value` when the pattern alone reads it, collected.
  auto inner = [&](const std::string& value) {
    const Id p = SoleReaderProducer(g, value);
    if (p != kNone) nodes.push_back(p);
    return p;
  };
  // x when `value` is Add(Tanh(Mul(Add(x, Mul(Pow(x, 3), 0.044715)), sqrt(2/pi))), 1).
  auto one_plus_tanh = [&](const std::string& value) -> std::string {
    const Id add = inner(value);
    const std::string t = add == kNone ? "" : OtherThanConstant(g, r[add], "Add", 1.0f, true);
    const Id tanh = t.empty() ? kNone : inner(t);
    if (tanh == kNone || !IsOp(r[tanh], "Tanh") || r[tanh].proto->input_size() != 1) return "";
    const Id scaled = inner(r[tanh].proto->input(0));
    const std::string sum = scaled == kNone ? "" : OtherThanConstant(g, r[scaled], "Mul", 0.7978845608f, true);
    const Id add_x = sum.empty() ? kNone : inner(sum);
    if (add_x == kNone || !IsOp(r[add_x], "Add") || r[add_x].opset < 7 || r[add_x].proto->input_size() != 2) return "";
    for (int side = 0; side < 2; ++side) {
      const std::string& x = r[add_x].proto->input(side);
      const Id cubic = SoleReaderProducer(g, r[add_x].proto->input(1 - side));
      const std::string cube = cubic == kNone ? "" : OtherThanConstant(g, r[cubic], "Mul", 0.044715f, true);
      const Id pow = cube.empty() ? kNone : SoleReaderProducer(g, cube);
      if (pow == kNone || !IsOp(r[pow], "Pow") || r[pow].proto->input_size() != 2 || r[pow].proto->input(0) != x ||
          !ConstantNear(g, *r[pow].proto, 1, 3.0f)) {
        continue;
      }
      nodes.insert(nodes.end(), {cubic, pow});
      return x;
    }
    return "";
  };
  std::string x;
  for (int side = 0; side < 2 && x.empty(); ++side) {
    nodes.resize(1);
    const Id other = inner(m.input(side));
    if (other == kNone || !IsOp(r[other], "Mul") || r[other].opset < 7 || r[other].proto->input_size() != 2) continue;
    const auto& o = *r[other].proto;
    if (ConstantNear(g, m, 1 - side, 0.5f)) {  // Mul(Mul(x, 1 + tanh), 0.5)
      for (int k = 0; k < 2 && x.empty(); ++k) {
        const size_t keep = nodes.size();
        const std::string t = one_plus_tanh(o.input(1 - k));
        if (!t.empty() && t == o.input(k)) x = t;
        if (x.empty()) nodes.resize(keep);
      }
    } else {  // Mul(Mul(x, 0.5), 1 + tanh)
      const std::string half = OtherThanConstant(g, r[other], "Mul", 0.5f, true);
      const std::string t = half.empty() ? "" : one_plus_tanh(m.input(1 - side));
      if (!t.empty() && t == half) x = t;
    }
  }
  if (x.empty() || !IsFloatLike(KnownType(g, x))) return std::nullopt;  // FastGelu's types
  auto node = std::make_shared<onnx::NodeProto>();
  node->set_name(m.name());
  node->set_op_type("FastGelu");
  node->set_domain(kMsDomain);
  node->add_input(x);
  node->add_output(m.output(0));
  Node fused = WithProto(last, std::move(node));
  fused.domain = kMsDomain;
  fused.opset = 1;
  return Patch{nodes, {std::move(fused)}, {}};
}

// com.microsoft BiasGelu(MatMul(x, W), b), as ONNX Runtime saves a transformer's FFN: one
// FusedMatMul with the bias and the Gelu (erf form, as BiasGelu computes it) in its epilogue. W a
// constant matrix (float or 16-bit) and b a float constant vector of its columns, as FuseMatMulBias asks.
std::optional<Patch> FuseBiasGelu(Rewriter& r, Id id) {
  const Graph& g = r.graph();
  const Node& bg = r[id];
  const auto& n = *bg.proto;
  if (bg.domain != kMsDomain || bg.op_type() != "BiasGelu" || n.input_size() != 2 || n.output_size() != 1) {
    return std::nullopt;
  }
  const Id p = SoleReaderProducer(g, n.input(0));
  if (p == kNone) return std::nullopt;
  const Node& matmul = r[p];
  if (!IsOp(matmul, "MatMul") || matmul.proto->input_size() != 2 || matmul.proto->output_size() != 1) return std::nullopt;
  const Tensor* w = WeightConstant(g, *matmul.proto, 1);
  const Tensor* bias = FloatConstant(g, n, 1);
  if (w == nullptr || w->rank() != 2 || bias == nullptr || bias->rank() != 1 || bias->size() != w->dim(1)) {
    return std::nullopt;
  }
  auto node = std::make_shared<onnx::NodeProto>(*matmul.proto);
  node->add_input(n.input(1));
  node->set_output(0, n.output(0));
  FusedActivationSpec{{Activation::kGelu}}.WriteTo(*node);
  return Patch{{p, id}, {InternalNode(matmul, std::move(node), internal_ops::kFusedMatMul)}, {}};
}

namespace {

// A pass-through node (RemovePassThrough's) whose input is a graph input or is read by other
// nodes too: its readers read the input instead, when they all read its output as node inputs (no
// subgraph captures it) and it is no graph output. A float16 model saved with float inputs starts
// with a Cast to half, which ComputeHalfInFloat makes a float Cast of the input: a copy of the
// whole input at every run (YOLOv8n at 640 x 640: 4.9 MB, live beside the input while the first
// convolution runs). ONNX Runtime saves a float16 CNN with a Cast to half after each float
// convolution whose output a Concat reads in half (ISNet's U-Net skips, also read by the next
// convolution): in float those Casts stood between the convolutions and the Concat.
std::optional<Patch> ReadInputDirectly(Rewriter& r, Id id) {
  const Graph& g = r.graph();
  const auto& n = *r[id].proto;
  const std::string& input = n.input(0);
  const std::string& output = n.output(0);
  if (g.constants.count(input) != 0 || g.nodes.IsOutput(output)) return std::nullopt;
  if (n.output_size() > 1 && std::any_of(n.output().begin() + 1, n.output().end(), [&](const std::string& o) {
        return !o.empty() && g.nodes.ReadCount(o) != 0;
      })) {
    return std::nullopt;
  }
  std::vector<Id> readers = g.nodes.Readers(output);
  std::sort(readers.begin(), readers.end());
  readers.erase(std::unique(readers.begin(), readers.end()), readers.end());
  int slots = 0;
  for (Id reader : readers) {
    for (const auto& in : r[reader].proto->input()) slots += in == output ? 1 : 0;
  }
  if (readers.empty() || slots != g.nodes.ReadCount(output)) return std::nullopt;
  Patch patch;
  patch.replaced.push_back(id);
  for (Id reader : readers) {
    auto renamed = std::make_shared<onnx::NodeProto>(*r[reader].proto);
    for (auto& in : *renamed->mutable_input()) {
      if (in == output) in = input;
    }
    patch.replaced.push_back(reader);
    patch.AddAt(WithProto(r[reader], std::move(renamed)), reader);
  }
  return patch;
}

}  // namespace

// Inference Dropout (opset 7 on; no training_mode, or a false constant one; the mask unread),
// Identity and a Cast to its input's own type pass their input through. The input's producer
// writes their output instead, so every reader (graph outputs and subgraphs included) keeps the
// name it reads and no copy is made; of a graph input, the readers read the input.
std::optional<Patch> RemovePassThrough(Rewriter& r, Id id) {
  const Graph& g = r.graph();
  const Node& node = r[id];
  const auto& n = *node.proto;
  if (n.input_size() < 1 || n.output_size() < 1) return std::nullopt;
  if (IsOp(node, "Dropout")) {
    if (node.opset < 7) return std::nullopt;  // Dropout-1 and -6 follow their is_test attribute
    if (n.input_size() > 2 && !n.input(2).empty()) {
      auto mode = g.constants.find(n.input(2));
      if (mode == g.constants.end() || mode->second.dtype() != DataType::kBool || mode->second.size() != 1 ||
          mode->second.data<bool>()[0]) {
        return std::nullopt;
      }
    }
    if (n.output_size() > 1 && !n.output(1).empty() && g.nodes.ReadCount(n.output(1)) != 0) return std::nullopt;
  } else if (IsOp(node, "Cast")) {
    // A Cast to the type its input has is the identity: a float16 model's Casts around an op kept
    // in float (its Resizes, say) once ComputeHalfInFloat runs the model on float twins.
    const auto* to = Attr(n, "to");
    const DataType from = KnownType(g, n.input(0));
    if (to == nullptr || n.output_size() != 1 || from == DataType::kUndefined || static_cast<int64_t>(from) != to->i()) {
      return std::nullopt;
    }
  } else if (!IsOp(node, "Identity") || n.output_size() != 1) {
    return std::nullopt;
  }
  const Id p = SoleProducer(g, node);
  if (p == kNone && IsOp(node, "Cast") && g.nodes.IsOutput(n.output(0)) && g.constants.count(n.input(0)) == 0) {
    // A graph output the input's other readers share: an Identity, which hands the value on
    // without the copy Cast makes (a float16 ISNet's Casts to float of the six decoder features
    // it returns, once run in float; the largest is 64 MB).
    auto identity = std::make_shared<onnx::NodeProto>(n);
    identity->set_op_type("Identity");
    identity->clear_attribute();
    Node replacement = WithProto(node, std::move(identity));
    replacement.opset = std::max(replacement.opset, 1);
    return Patch{{id}, {std::move(replacement)}, {}};
  }
  if (p == kNone) return ReadInputDirectly(r, id);
  auto rewired = std::make_shared<onnx::NodeProto>(*r[p].proto);
  for (auto& out : *rewired->mutable_output()) {
    if (out == n.input(0)) out = n.output(0);
  }
  return Patch{{p, id}, {WithProto(r[p], std::move(rewired))}, {}};
}

Status FuseForInference(Graph* g) {
  // In this order: attention before the products take biases and epilogues; BatchNormalization
  // folded before a Conv takes its activation; chains last, over what no product took.
  static const std::pair<const char*, Rule> kRules[] = {
      {"RemovePassThrough", RemovePassThrough},
      {"AdoptSavedFusedConv", AdoptSavedFusedConv},      // ort_saved_forms.h
      {"DropShapeStartZero", DropShapeStartZero},        // ort_saved_forms.h
      {"FuseAttention", FuseAttention},                  // attention_fusion.h
      {"FuseDynamicQuantMatMul", FuseDynamicQuantMatMul},  // dynamic_quant_fusion.h
      {"FuseConvIntegerTail", FuseConvIntegerTail},        // dynamic_quant_fusion.h
      {"FuseLayerNormalization", FuseLayerNormalization},  // norm_fusion.h
      {"FuseRmsNormalization", FuseRmsNormalization},  // norm_fusion.h
      {"FuseSkipLayerNormalization", FuseSkipLayerNormalization},  // norm_fusion.h
      {"FoldBatchNorm", FoldBatchNorm},
      {"FoldChannelAffine", FoldChannelAffine},
      {"FuseMatMulBias", FuseMatMulBias},
      {"MergeQkvProjections", MergeQkvProjections},      // qkv_merge.h
      {"FuseResidual", FuseResidual},
      {"FuseHardSigmoid", FuseHardSigmoid},              // hard_activation_fusion.h
      {"FuseHardSwish", FuseHardSwish},                  // hard_activation_fusion.h
      {"FuseSwish", FuseSwish},
      {"FuseGelu", FuseGelu},
      {"FuseGeluTanh", FuseGeluTanh},
      {"FuseBiasGelu", FuseBiasGelu},
      {"FuseActivation", FuseActivation},
      {"FuseGatedFeedForward", FuseGatedFeedForward},  // gated_ffn.h: after the gate's activation
      {"FuseElementwiseChain", FuseElementwiseChain},  // chain_fusion.h
  };
  for (const auto& [name, rule] : kRules) ONNXFLOW_RETURN_IF_ERROR(RunRule(g, name, rule));
  for (const Node& node : g->nodes) {
    for (const auto& [name, sub] : node.subgraphs) ONNXFLOW_RETURN_IF_ERROR(FuseForInference(sub.get()));
  }
  return Status::Ok();
}

}  // namespace onnxflow::graph
