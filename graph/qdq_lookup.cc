#include "graph/qdq_lookup.h"

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

#include "graph/fusion_util.h"
#include "graph/qdq_util.h"
#include "graph/rewrite.h"
#include "graph/value_rank.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"

namespace onnxflow::graph {

// DequantizeLinear -> QuantizeLinear, the DQ's only reader the Q, both per tensor on 8-bit values
// (what ResNet's QLinearAdd -> Relu -> Q leaves once the Relu went, graph/qdq_fusion.cc):
// com.onnxflow ByteLookup with the pair's result for each of the 256 inputs, computed with the
// float operations of the DequantizeLinear and QuantizeLinear kernels ((x - z) * s, then
// round_half_even(v / s') + z', saturated), so the values are the pair's exactly.
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
    // Equal parameters on both sides (what graph/qdq_fusion.cc's HoistQuantize leaves when a
    // chain of byte moves sat between them): an Identity, which FuseForInference's
    // RemovePassThrough then removes.
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

// Whether `v` is a DequantizeLinear of a one-element constant, or of a QuantizeLinear of one: a
// quantized Clip bound (a quantizer that quantizes every float input of a Clip, its min and max
// too, writes Constant -> Q -> DQ), one number that folding computes after this pass.
bool IsDequantizedScalar(const Graph& g, const std::string& v) {
  const Id p = g.nodes.Producer(v);
  if (p == kNone || !IsQdqOp(g.nodes[p], "DequantizeLinear")) return false;
  const Node& dq = g.nodes[p];
  std::string x = dq.proto->input(0);
  const Id q = g.nodes.Producer(x);
  if (q != kNone) {
    if (!IsQdqOp(g.nodes[q], "QuantizeLinear")) return false;
    x = g.nodes[q].proto->input(0);
  }
  const auto c = g.constants.find(x);
  // Rank 0 or 1, as a constant operand must be: [1, 1, 1, 1] would broadcast the table's rank up.
  if (c == g.constants.end() || c->second.size() != 1 || c->second.rank() > 1) return false;
  // The scale and zero point: constants too, so the whole chain folds.
  for (Id id : {p, q}) {
    if (id == kNone) continue;
    const auto& in = g.nodes[id].proto->input();
    for (int i = 1; i < in.size(); ++i) {
      if (!in[i].empty() && g.constants.count(in[i]) == 0) return false;
    }
  }
  return true;
}

// The elementwise nodes that compute `v` from the output of one DequantizeLinear (`*dq`: kNone
// until the walk meets it, then every other path must end at that one too) and constants, in an
// order that puts producers first; false when v is not such a function or the cone grows past 16
// nodes. Constants of one element always qualify (dequantized ones too, IsDequantizedScalar); a
// larger float one (a per-channel [C, 1, 1] operand) and a constant BatchNormalization (its input
// walked, not its parameters: its scale goes, marked true, as the channel count along axis 1
// whatever X's rank) go into `*per_channel` for the caller to check against the channel axis.
using WideConstants = std::vector<std::pair<std::string, bool>>;
bool CollectCone(const Graph& g, const std::string& v, Id* dq, std::vector<Id>* cone, WideConstants* per_channel) {
  if (auto c = g.constants.find(v); c != g.constants.end()) {
    if (c->second.dtype() != DataType::kFloat) return false;
    if (c->second.size() == 1 && c->second.rank() <= 1) return true;
    per_channel->emplace_back(v, false);
    return true;
  }
  if (IsDequantizedScalar(g, v)) return true;
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
  const DataType type = QuantizedType(g, n, zero, quantized);
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

namespace {

// The data inputs of a per-tensor 8-bit op whose other inputs are constants of one element (a
// per-tensor ByteLookup: its table of 256); empty for any other node.
std::vector<int> ByteOpData(const Graph& g, const Node& n) {
  const auto& p = *n.proto;
  if (p.output_size() != 1 || !n.subgraphs.empty()) return {};
  std::vector<int> data;
  if (IsQLinearPointwiseUnary(n)) {
    data = {0};
  } else if (IsMs(n, "QLinearMul") || IsMs(n, "QLinearAdd")) {
    data = {0, 3};
  } else if (IsInternal(n, internal_ops::kByteLookup)) {
    const Tensor* table = Constant(g, p, 1);
    if (Attr(p, "axis") != nullptr || p.input_size() != 2 || table == nullptr || table->size() != 256) return {};
    return {0};
  } else {
    return {};
  }
  for (int i = 0; i < p.input_size(); ++i) {
    if (std::find(data.begin(), data.end(), i) != data.end()) {
      if (!HasInput(p, i)) return {};
      continue;
    }
    if (!HasInput(p, i)) continue;
    const Tensor* c = Constant(g, p, i);
    if (c == nullptr || c->size() != 1) return {};
  }
  return data;
}

// The byte ops computing `v` from `x` alone (producers first) into `*cone`; false when some path
// reaches another value or the cone passes 16 nodes.
bool ByteCone(const Graph& g, const std::string& v, const std::string& x, std::vector<Id>* cone) {
  if (v == x) return true;
  const Id p = g.nodes.Producer(v);
  if (p == kNone) return false;
  if (std::find(cone->begin(), cone->end(), p) != cone->end()) return true;
  const std::vector<int> data = ByteOpData(g, g.nodes[p]);
  if (data.empty() || cone->size() >= 16) return false;
  for (int i : data) {
    if (!ByteCone(g, g.nodes[p].proto->input(i), x, cone)) return false;
  }
  cone->push_back(p);
  return true;
}

// The 8-bit type of `x` as the cone's readers of it declare it (a QLinear op's zero point, uint8
// when absent), else as the load knows it.
DataType ByteType(const Graph& g, const std::vector<Id>& cone, const std::string& x) {
  for (Id id : cone) {
    const Node& n = g.nodes[id];
    for (int i : ByteOpData(g, n)) {
      if (n.proto->input(i) != x || IsInternal(n, internal_ops::kByteLookup)) continue;
      const Tensor* zero = Constant(g, *n.proto, i + 2);
      return zero != nullptr ? zero->dtype() : DataType::kUint8;
    }
  }
  return KnownType(g, x);
}

}  // namespace

// The root's cone from the nearest value that makes one of two nodes or more: each candidate x
// (the root's data inputs, then theirs, breadth first) is tried in turn. The cone's values other
// than the root's are read by the cone alone; the table is the cone's copies over the 256 codes,
// folded at load by the kernels that would have run, so the bytes are theirs.
std::optional<Patch> FuseByteCone(Rewriter& r, Id root) {
  const Graph& g = r.graph();
  const Node& node = r[root];
  if (ByteOpData(g, node).empty()) return std::nullopt;
  std::vector<std::string> candidates;
  for (int i : ByteOpData(g, node)) candidates.push_back(node.proto->input(i));
  std::vector<Id> cone;
  std::string x;
  for (size_t k = 0; k < candidates.size() && k < 32; ++k) {
    std::vector<Id> attempt;
    if (ByteCone(g, node.proto->output(0), candidates[k], &attempt) && attempt.size() >= 2) {
      cone = std::move(attempt);
      x = candidates[k];
      break;
    }
    const Id p = g.nodes.Producer(candidates[k]);
    if (p == kNone) continue;
    for (int i : ByteOpData(g, g.nodes[p])) candidates.push_back(g.nodes[p].proto->input(i));
  }
  if (cone.empty() || g.constants.count(x) != 0) return std::nullopt;
  for (Id id : cone) {
    if (id == root) continue;
    const std::string& v = g.nodes[id].proto->output(0);
    if (g.nodes.IsOutput(v)) return std::nullopt;
    for (Id reader : g.nodes.Readers(v)) {
      if (std::find(cone.begin(), cone.end(), reader) == cone.end()) return std::nullopt;
    }
  }
  const DataType type = ByteType(g, cone, x);
  if (!Is8Bit(type)) return std::nullopt;

  Patch patch;
  const std::string codes = r.FreshName(x + "_codes");
  Tensor all(type, {256});
  for (int64_t i = 0; i < 256; ++i) static_cast<uint8_t*>(all.mutable_raw_data())[i] = static_cast<uint8_t>(i);
  patch.constants.emplace_back(codes, std::move(all));
  std::map<std::string, std::string> renamed = {{x, codes}};
  for (Id id : cone) {
    const Node& n = g.nodes[id];
    auto proto = std::make_shared<onnx::NodeProto>(*n.proto);
    proto->set_name(n.proto->name() + "/lookup_table");
    for (int i = 0; i < proto->input_size(); ++i) {
      if (auto it = renamed.find(proto->input(i)); it != renamed.end()) proto->set_input(i, it->second);
    }
    const std::string output = r.FreshName(n.proto->output(0) + "/lookup_table");
    renamed[n.proto->output(0)] = output;
    proto->set_output(0, output);
    patch.added.push_back(WithProto(n, std::move(proto)));
  }
  auto lookup = std::make_shared<onnx::NodeProto>();
  lookup->set_name(node.proto->name());
  lookup->set_op_type(internal_ops::kByteLookup);
  lookup->set_domain(kOnnxflowDomain);
  lookup->add_input(x);
  lookup->add_input(renamed[node.proto->output(0)]);
  lookup->add_output(node.proto->output(0));
  Node fused = WithProto(node, std::move(lookup));
  fused.domain = kOnnxflowDomain;
  fused.opset = internal_ops::kVersion;
  patch.added.push_back(std::move(fused));
  patch.replaced = cone;
  return patch;
}

}  // namespace onnxflow::graph
