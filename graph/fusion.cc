#include "graph/fusion.h"

#include <cmath>
#include <algorithm>
#include <map>

#include "graph/attention_fusion.h"
#include "graph/chain_fusion.h"
#include "graph/dynamic_quant_fusion.h"
#include "graph/fusion_util.h"
#include "graph/norm_fusion.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"

namespace onnxflow::graph {
namespace {

// Conv -> BatchNormalization: W' = W * s, B' = (B - mean) * s + bias, s = scale / sqrt(var + eps).
bool FoldBatchNorm(Graph* g, Uses& u, size_t bn_index, std::vector<bool>* removed) {
  const Node& bn = g->nodes[bn_index];
  const auto& b = *bn.proto;
  if (!IsOp(bn, "BatchNormalization") || b.input_size() < 5) return false;
  if (const auto* t = Attr(b, "training_mode"); t != nullptr && t->i() != 0) return false;
  for (int k = 1; k < b.output_size(); ++k) {
    if (!b.output(k).empty()) return false;
  }
  const int p = SoleProducer(*g, u, bn);
  if (p < 0 || (*removed)[p] || !IsOp(g->nodes[p], "Conv")) return false;
  const auto& conv = *g->nodes[p].proto;
  const Tensor* w = FloatConstant(*g, conv, 1);
  const Tensor* scale = FloatConstant(*g, b, 1);
  const Tensor* bias = FloatConstant(*g, b, 2);
  const Tensor* mean = FloatConstant(*g, b, 3);
  const Tensor* var = FloatConstant(*g, b, 4);
  const bool has_b = conv.input_size() > 2 && !conv.input(2).empty();
  const Tensor* conv_b = has_b ? FloatConstant(*g, conv, 2) : nullptr;
  if (!w || !scale || !bias || !mean || !var || (has_b && !conv_b) || w->rank() < 1) return false;
  const int64_t channels = w->dim(0);
  for (const Tensor* t : {scale, bias, mean, var}) {
    if (t->size() != channels) return false;
  }
  if (conv_b && conv_b->size() != channels) return false;
  const float eps = Attr(b, "epsilon") ? Attr(b, "epsilon")->f() : 1e-5f;

  Tensor new_w = w->Clone();
  Tensor new_b(DataType::kFloat, {channels});
  const int64_t per_channel = w->size() / std::max<int64_t>(channels, 1);
  for (int64_t c = 0; c < channels; ++c) {
    const float s = scale->data<float>()[c] / std::sqrt(var->data<float>()[c] + eps);
    float* row = new_w.mutable_data<float>() + c * per_channel;
    for (int64_t k = 0; k < per_channel; ++k) row[k] *= s;
    const float b0 = conv_b ? conv_b->data<float>()[c] : 0.0f;
    new_b.mutable_data<float>()[c] = (b0 - mean->data<float>()[c]) * s + bias->data<float>()[c];
  }
  const std::string base = b.output(0);
  auto folded = std::make_shared<onnx::NodeProto>(conv);
  folded->set_input(1, base + "/folded_weight");
  if (folded->input_size() < 3) folded->add_input("");
  folded->set_input(2, base + "/folded_bias");
  folded->set_output(0, base);
  g->constants[base + "/folded_weight"] = std::move(new_w);
  g->constants[base + "/folded_bias"] = std::move(new_b);
  g->nodes[p].proto = std::move(folded);
  u.producer[base] = p;
  (*removed)[bn_index] = true;
  return true;
}

// Conv -> Mul / Add by a constant that scales or shifts each output channel (Caffe2's exports
// write a BatchNormalization's affine part this way, DenseNet's after every one): W' = W * s and
// B' = B * s for Mul, B' = B + b for Add. The weights' rank is the output's, so the constant's
// broadcast is known to be per channel.
bool FoldChannelAffine(Graph* g, Uses& u, size_t index, std::vector<bool>* removed) {
  const Node& op = g->nodes[index];
  const auto& n = *op.proto;
  const bool mul = IsOp(op, "Mul");
  if ((!mul && !IsOp(op, "Add")) || op.opset < 7 || n.input_size() != 2 || n.output_size() != 1) return false;
  for (int i = 0; i < 2; ++i) {
    const Tensor* constant = FloatConstant(*g, n, 1 - i);
    const int p = SoleReaderProducer(u, n.input(i));
    if (constant == nullptr || p < 0 || (*removed)[p] || !IsOp(g->nodes[p], "Conv")) continue;
    const auto& conv = *g->nodes[p].proto;
    const Tensor* w = FloatConstant(*g, conv, 1);
    const bool has_b = conv.input_size() > 2 && !conv.input(2).empty();
    const Tensor* conv_b = has_b ? FloatConstant(*g, conv, 2) : nullptr;
    if (w == nullptr || w->rank() < 3 || conv.output_size() != 1 || (has_b && conv_b == nullptr)) continue;
    const int64_t channels = w->dim(0);
    const std::vector<float> values = PerChannelValues(*constant, w->rank(), channels);
    if (values.empty() || (conv_b != nullptr && conv_b->size() != channels)) continue;

    const std::string base = n.output(0);
    auto folded = std::make_shared<onnx::NodeProto>(conv);
    if (mul) {
      Tensor new_w = w->Clone();
      const int64_t per_channel = w->size() / channels;
      for (int64_t c = 0; c < channels; ++c) {
        float* row = new_w.mutable_data<float>() + c * per_channel;
        for (int64_t k = 0; k < per_channel; ++k) row[k] *= values[c];
      }
      g->constants[base + "/folded_weight"] = std::move(new_w);
      folded->set_input(1, base + "/folded_weight");
    }
    if (!mul || conv_b != nullptr) {  // a Mul scales the bias; an Add makes one when there is none
      Tensor new_b(DataType::kFloat, {channels});
      for (int64_t c = 0; c < channels; ++c) {
        const float b0 = conv_b != nullptr ? conv_b->data<float>()[c] : 0.0f;
        new_b.mutable_data<float>()[c] = mul ? b0 * values[c] : b0 + values[c];
      }
      g->constants[base + "/folded_bias"] = std::move(new_b);
      if (folded->input_size() < 3) folded->add_input("");
      folded->set_input(2, base + "/folded_bias");
    }
    folded->set_output(0, base);
    g->nodes[p].proto = std::move(folded);
    u.producer[base] = p;
    (*removed)[index] = true;
    return true;
  }
  return false;
}

// Conv -> Add/Sum(conv, Z) (a residual connection): FusedConv with Z as a fourth input, added in
// the GEMM epilogue instead of in a pass of its own. Add's operands commute exactly, so either
// operand may be the convolution; Z must not depend on it (the convolution's sole reader is the
// sum), so the fused node cannot close a cycle.
bool FuseResidual(Graph* g, Uses& u, size_t sum_index, std::vector<bool>* removed) {
  const Node& sum = g->nodes[sum_index];
  const auto& s = *sum.proto;
  const bool is_add = IsOp(sum, "Add") && sum.opset >= 7;  // older Add broadcasts by attribute
  if (!(is_add || IsOp(sum, "Sum")) || s.input_size() != 2 || s.output_size() != 1) return false;
  int best = -1, best_input = -1;
  for (int i = 0; i < 2; ++i) {
    const int p = SoleReaderProducer(u, s.input(i));
    if (p < 0 || (*removed)[p]) continue;
    const Node& conv = g->nodes[p];
    if (!IsOp(conv, "Conv") || conv.proto->output_size() != 1 || !IsFloatProduct(*g, conv)) continue;
    if (p > best) {  // the later convolution: the earlier one has more time to produce Z
      best = p;
      best_input = i;
    }
  }
  if (best < 0 || s.input(0) == s.input(1)) return false;
  Node& conv = g->nodes[best];
  auto node = std::make_shared<onnx::NodeProto>(*conv.proto);
  MakeInternal(&conv, node.get(), internal_ops::kFusedConv);
  while (node->input_size() < 3) node->add_input("");
  node->add_input(s.input(1 - best_input));
  node->set_output(0, s.output(0));
  conv.proto = std::move(node);
  u.producer[s.output(0)] = best;
  (*removed)[sum_index] = true;
  return true;
}

// MatMul -> Add(product, bias), bias a float constant vector of B's N columns: FusedMatMul with
// the bias as a third input, added in the GEMM epilogue (a transformer's linear layers, where the
// Add was a pass of its own over every projection's output). A bias of higher rank could broadcast
// the product to a new shape, so only a vector qualifies.
bool FuseMatMulBias(Graph* g, Uses& u, size_t add_index, std::vector<bool>* removed) {
  const Node& add = g->nodes[add_index];
  const auto& a = *add.proto;
  if (!IsOp(add, "Add") || add.opset < 7 || a.input_size() != 2 || a.output_size() != 1) return false;
  for (int i = 0; i < 2; ++i) {
    const int p = SoleReaderProducer(u, a.input(i));
    if (p < 0 || (*removed)[p]) continue;
    Node& matmul = g->nodes[p];
    if (!IsOp(matmul, "MatMul") || matmul.proto->input_size() != 2 || matmul.proto->output_size() != 1) continue;
    const Tensor* w = FloatConstant(*g, *matmul.proto, 1);
    const Tensor* bias = FloatConstant(*g, a, 1 - i);
    if (w == nullptr || w->rank() != 2 || bias == nullptr || bias->rank() != 1 || bias->size() != w->dim(1)) continue;
    auto node = std::make_shared<onnx::NodeProto>(*matmul.proto);
    MakeInternal(&matmul, node.get(), internal_ops::kFusedMatMul);
    node->add_input(a.input(1 - i));
    node->set_output(0, a.output(0));
    matmul.proto = std::move(node);
    u.producer[a.output(0)] = p;
    (*removed)[add_index] = true;
    return true;
  }
  return false;
}

// Producer `p` (Conv, Gemm, MatMul, or a fused one without an activation yet) applies an activation
// in its epilogue, its attributes set by `add_activation`, and writes `output`. False, and nothing
// changed, for any other producer.
template <class AddActivation>
bool TakeActivation(Graph* g, Uses& u, int p, const std::string& output, const AddActivation& add_activation) {
  Node& producer = g->nodes[p];
  // A residual FusedConv (below) has no activation yet: it takes this one after its sum.
  // So has a FusedMatMul that took its bias (FuseMatMulBias).
  const bool fused_without_activation = producer.domain == kFusedDomain && !HasEpilogue(producer);
  const bool residual_conv = fused_without_activation && producer.op_type() == internal_ops::kFusedConv;
  const bool biased_matmul = fused_without_activation && producer.op_type() == internal_ops::kFusedMatMul;
  const char* fused = IsOp(producer, "Conv") || residual_conv     ? internal_ops::kFusedConv
                      : IsOp(producer, "Gemm")                    ? internal_ops::kFusedGemm
                      : IsOp(producer, "MatMul") || biased_matmul ? internal_ops::kFusedMatMul
                                                                  : nullptr;
  if (fused == nullptr || producer.proto->output_size() != 1 || !IsFloatProduct(*g, producer)) return false;

  auto node = std::make_shared<onnx::NodeProto>(*producer.proto);
  MakeInternal(&producer, node.get(), fused);
  node->set_output(0, output);
  add_activation(node.get());
  producer.proto = std::move(node);
  u.producer[output] = p;
  return true;
}

bool FuseActivation(Graph* g, Uses& u, size_t act_index, std::vector<bool>* removed) {
  const Node& act = g->nodes[act_index];
  if (!IsEpilogueActivation(*g, act)) return false;
  const int p = SoleProducer(*g, u, act);
  if (p < 0 || (*removed)[p]) return false;
  if (!TakeActivation(g, u, p, act.proto->output(0),
                      [&](onnx::NodeProto* node) { AddEpilogueActivation(*g, act, node); })) {
    return false;
  }
  (*removed)[act_index] = true;
  return true;
}

// Swish (SiLU), y = x * Sigmoid(x), after a product: the Sigmoid and the Mul become the producer's
// epilogue activation "Swish" (EfficientNet's convolutions), one pass instead of three. x must be
// read by those two nodes only.
bool FuseSwish(Graph* g, Uses& u, size_t mul_index, std::vector<bool>* removed) {
  const Node& mul = g->nodes[mul_index];
  const auto& m = *mul.proto;
  if (!IsOp(mul, "Mul") || mul.opset < 7 || m.input_size() != 2 || m.output_size() != 1) return false;
  for (int i = 0; i < 2; ++i) {
    const std::string& x = m.input(1 - i);
    const int sigmoid = SoleReaderProducer(u, m.input(i));
    if (sigmoid < 0 || (*removed)[sigmoid] || !IsOp(g->nodes[sigmoid], "Sigmoid") ||
        g->nodes[sigmoid].proto->input(0) != x) {
      continue;
    }
    const int producer = ProducerReadBy(u, x, 2);
    if (producer < 0 || (*removed)[producer]) continue;
    if (!TakeActivation(g, u, producer, m.output(0),
                        [](onnx::NodeProto* node) { FusedActivationSpec{{Activation::kSwish}}.WriteTo(*node); })) {
      continue;
    }
    (*removed)[sigmoid] = true;
    (*removed)[mul_index] = true;
    return true;
  }
  return false;
}

// A float constant holding one value near `want` (exports write sqrt(2) as 1.4142135 or
// 1.41421356...).
bool ConstantNear(const Graph& g, const onnx::NodeProto& n, int input, float want) {
  const Tensor* c = FloatConstant(g, n, input);
  return c != nullptr && c->size() == 1 && c->rank() <= 1 && std::fabs(c->data<float>()[0] - want) <= 1e-6f * want;
}

// The operand of two-input node `n` (op `op`, opset 7 on) that is not the constant `want`; empty
// when `n` is not that.
std::string OtherThanConstant(const Graph& g, const Node& n, const char* op, float want, bool either_side) {
  const auto& p = *n.proto;
  if (!IsOp(n, op) || n.opset < 7 || p.input_size() != 2 || p.output_size() != 1) return "";
  if (ConstantNear(g, p, 1, want)) return p.input(0);
  if (either_side && ConstantNear(g, p, 0, want)) return p.input(1);
  return "";
}

// GELU written out as PyTorch exports it, after a product x:
//   Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5)   or   Mul(Mul(x, 0.5), Add(Erf(Div(x, sqrt 2)), 1))
// (operands of Add and Mul in either order, Div also as Mul by 1/sqrt 2): the producer applies it in
// its epilogue ("Gelu", the erf form), instead of an ElementwiseChain pass over BERT's 128 x 3072
// FFN activations. x must be read by those two nodes only.
bool FuseGelu(Graph* g, Uses& u, size_t mul_index, std::vector<bool>* removed) {
  const Node& last = g->nodes[mul_index];
  const auto& m = *last.proto;
  if ((*removed)[mul_index] || !IsOp(last, "Mul") || last.opset < 7 || m.input_size() != 2 || m.output_size() != 1) {
    return false;
  }
  // Returns the Erf chain's x when `value` is Add(Erf(x / sqrt 2), 1), read once, collecting its nodes.
  auto one_plus_erf = [&](const std::string& value, std::vector<int>* nodes) -> std::string {
    const int add = SoleReaderProducer(u, value);
    if (add < 0 || (*removed)[add]) return "";
    const std::string e = OtherThanConstant(*g, g->nodes[add], "Add", 1.0f, true);
    const int erf = e.empty() ? -1 : SoleReaderProducer(u, e);
    if (erf < 0 || (*removed)[erf] || !IsOp(g->nodes[erf], "Erf") || g->nodes[erf].proto->input_size() != 1) return "";
    const std::string& d = g->nodes[erf].proto->input(0);
    const int div = SoleReaderProducer(u, d);
    if (div < 0 || (*removed)[div]) return "";
    std::string x = OtherThanConstant(*g, g->nodes[div], "Div", 1.41421356f, false);
    if (x.empty()) x = OtherThanConstant(*g, g->nodes[div], "Mul", 0.70710678f, true);
    if (x.empty()) return "";
    nodes->insert(nodes->end(), {add, erf, div});
    return x;
  };
  for (int side = 0; side < 2; ++side) {
    std::vector<int> nodes;
    std::string x;
    const int inner = SoleReaderProducer(u, m.input(side));
    if (inner < 0 || (*removed)[inner]) continue;
    // Form 1: last = Mul(inner, 0.5), inner = Mul(x, 1 + erf).
    if (ConstantNear(*g, m, 1 - side, 0.5f) && IsOp(g->nodes[inner], "Mul") && g->nodes[inner].opset >= 7 &&
        g->nodes[inner].proto->input_size() == 2) {
      const auto& in = *g->nodes[inner].proto;
      for (int k = 0; k < 2 && x.empty(); ++k) {
        std::vector<int> found;
        const std::string erf_x = one_plus_erf(in.input(1 - k), &found);
        if (!erf_x.empty() && erf_x == in.input(k)) {
          x = erf_x;
          nodes = found;
        }
      }
    } else {
      // Form 2: last = Mul(half, 1 + erf), half = Mul(x, 0.5), inner being either of them.
      const std::string half_x = OtherThanConstant(*g, g->nodes[inner], "Mul", 0.5f, true);
      std::vector<int> found;
      const std::string erf_x = half_x.empty() ? "" : one_plus_erf(m.input(1 - side), &found);
      if (!erf_x.empty() && erf_x == half_x) {
        x = erf_x;
        nodes = found;
      }
    }
    if (x.empty()) continue;
    nodes.push_back(inner);
    const int producer = ProducerReadBy(u, x, 2);
    if (producer < 0 || (*removed)[producer]) continue;
    if (!TakeActivation(g, u, producer, m.output(0),
                        [](onnx::NodeProto* node) { FusedActivationSpec{{Activation::kGelu}}.WriteTo(*node); })) {
      continue;
    }
    for (int i : nodes) (*removed)[i] = true;
    (*removed)[mul_index] = true;
    return true;
  }
  return false;
}

// com.microsoft BiasGelu(MatMul(x, W), b), as ONNX Runtime saves a transformer's FFN: one
// FusedMatMul with the bias and the Gelu (erf form, as BiasGelu computes it) in its epilogue. W a
// float constant matrix and b a float constant vector of its columns, as FuseMatMulBias asks.
bool FuseBiasGelu(Graph* g, Uses& u, size_t index, std::vector<bool>* removed) {
  const Node& bg = g->nodes[index];
  const auto& n = *bg.proto;
  if ((*removed)[index] || bg.domain != kMsDomain || bg.op_type() != "BiasGelu" || n.input_size() != 2 ||
      n.output_size() != 1) {
    return false;
  }
  const int p = SoleReaderProducer(u, n.input(0));
  if (p < 0 || (*removed)[p]) return false;
  Node& matmul = g->nodes[p];
  if (!IsOp(matmul, "MatMul") || matmul.proto->input_size() != 2 || matmul.proto->output_size() != 1) return false;
  const Tensor* w = FloatConstant(*g, *matmul.proto, 1);
  const Tensor* bias = FloatConstant(*g, n, 1);
  if (w == nullptr || w->rank() != 2 || bias == nullptr || bias->rank() != 1 || bias->size() != w->dim(1)) return false;
  auto node = std::make_shared<onnx::NodeProto>(*matmul.proto);
  MakeInternal(&matmul, node.get(), internal_ops::kFusedMatMul);
  node->add_input(n.input(1));
  node->set_output(0, n.output(0));
  FusedActivationSpec{{Activation::kGelu}}.WriteTo(*node);
  matmul.proto = std::move(node);
  u.producer[n.output(0)] = p;
  (*removed)[index] = true;
  return true;
}

// Inference Dropout (opset 7 on; no training_mode, or a false constant one; the mask unread) and
// Identity pass their input through. The input's producer writes their output instead, so every
// reader (graph outputs and subgraphs included) keeps the name it reads and no copy is made.
bool RemovePassThrough(Graph* g, Uses& u, size_t index, std::vector<bool>* removed) {
  const Node& node = g->nodes[index];
  const auto& n = *node.proto;
  if (n.input_size() < 1 || n.output_size() < 1) return false;
  if (IsOp(node, "Dropout")) {
    if (node.opset < 7) return false;  // Dropout-1 and -6 follow their is_test attribute
    if (n.input_size() > 2 && !n.input(2).empty()) {
      auto mode = g->constants.find(n.input(2));
      if (mode == g->constants.end() || mode->second.dtype() != DataType::kBool || mode->second.size() != 1 ||
          mode->second.data<bool>()[0]) {
        return false;
      }
    }
    if (n.output_size() > 1 && !n.output(1).empty() && u.readers.count(n.output(1)) != 0) return false;
  } else if (!IsOp(node, "Identity") || n.output_size() != 1) {
    return false;
  }
  const int p = SoleProducer(*g, u, node);
  if (p < 0 || (*removed)[p]) return false;
  auto rewired = std::make_shared<onnx::NodeProto>(*g->nodes[p].proto);
  for (auto& out : *rewired->mutable_output()) {
    if (out == n.input(0)) out = n.output(0);
  }
  g->nodes[p].proto = std::move(rewired);
  u.producer[n.output(0)] = p;
  (*removed)[index] = true;
  return true;
}

}  // namespace

void FuseForInference(Graph* g) {
  Apply(g, RemovePassThrough);
  Apply(g, FuseAttention);  // attention_fusion.h: before the products take biases and epilogues
  Apply(g, FuseDynamicQuantMatMul);  // dynamic_quant_fusion.h
  Apply(g, FuseLayerNormalization);
  Apply(g, FoldBatchNorm);
  Apply(g, FoldChannelAffine);
  Apply(g, FuseMatMulBias);
  Apply(g, FuseResidual);
  Apply(g, FuseSwish);
  Apply(g, FuseGelu);
  Apply(g, FuseBiasGelu);
  Apply(g, FuseActivation);
  Apply(g, FuseElementwiseChain);
  for (auto& node : g->nodes) {
    for (auto& [name, sub] : node.subgraphs) FuseForInference(sub.get());
  }
}

}  // namespace onnxflow::graph
