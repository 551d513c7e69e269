#include "graph/quant_layout.h"

#include <cstring>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/qdq_util.h"
#include "graph/rewrite.h"
#include "graph/value_rank.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/registry.h"

namespace onnxflow::graph {
namespace {

enum class Role {
  kPlain,       // stays as it is, reading plain values
  kConv,        // QLinearConv -> QLinearConvNhwc
  kMaxPool,     // 8-bit MaxPool -> MaxPoolNhwc
  kPool,        // QLinear(Global)AveragePool -> the same with channels_last = 1
  kConcat,      // QLinearConcat over channels -> axis 3
  kLayoutFree,  // elementwise: the same op on channels-last values
  kShuffle,     // Reshape -> Transpose -> Reshape splitting the channels into groups and swapping them
  kPad,         // Pad by constant pads -> the same pads in channels-last order
  kSplit,       // Split over channels -> axis 3, every output channels-last
  kResize,      // nearest Resize by constant scales or sizes -> them in channels-last order
};

bool IsScalarConstant(const Graph& g, const onnx::NodeProto& n, int i) {
  if (!HasInput(n, i)) return false;
  auto c = g.constants.find(n.input(i));
  return c != g.constants.end() && c->second.size() == 1;
}

// The element type of `value`: as the load inferred it, or (com.microsoft ops are not inferred)
// the type of the output zero point of the QLinear op that writes it, seen through ops that keep
// their input's type.
DataType TypeOf(const Graph& g, const std::string& value, int depth = 0) {
  const DataType known = KnownType(g, value);
  if (known != DataType::kUndefined) return known;
  const Id p = g.nodes.Producer(value);
  if (p == kNone) return known;
  const Node& node = g.nodes[p];
  // Ops whose output has their first input's type (a MaxPool after a QLinearConcat).
  if ((IsOp(node, "MaxPool") || IsOp(node, "Max") || IsOp(node, "Relu") || IsOp(node, "Reshape") ||
       IsOp(node, "Transpose") || IsOp(node, "Split") || IsOp(node, "Resize")) &&
      node.proto->input_size() > 0 && depth < 8) {
    return TypeOf(g, node.proto->input(0), depth + 1);
  }
  // A ByteLookup gives its table's type (graph/qdq_lookup.h: a SiLU of 8-bit ops became one).
  if (IsInternal(node, internal_ops::kByteLookup) && node.proto->input_size() > 1) {
    auto table = g.constants.find(node.proto->input(1));
    return table == g.constants.end() ? known : table->second.dtype();
  }
  if (node.domain != kMsDomain) return known;
  const std::string& t = node.op_type();
  const int zero = t == "QLinearAdd" || t == "QLinearMul"                                  ? 7
                   : t == "QLinearConcat"                                                  ? 1
                   : t == "QLinearGlobalAveragePool" || t == "QLinearAveragePool" ||
                           t == "QLinearSigmoid" || t == "QLinearLeakyRelu" || t == "QLinearSoftmax" ? 4
                   : t == "QLinearWhere"                                                   ? 8
                                                                                           : -1;
  if (zero < 0 || !HasInput(*node.proto, zero)) return known;
  auto c = g.constants.find(node.proto->input(zero));
  return c == g.constants.end() ? known : c->second.dtype();
}

// A ByteLookup that reads the same table channels-last: one table for every element, or a table
// per channel of axis 1 (graph/qdq_lookup.cc's per-channel lookup, DenseNet's BatchNormalization
// -> Relu between a DQ and a Q), whose axis then becomes 3.
bool IsChannelsLastLookup(const Node& node) {
  if (!IsInternal(node, internal_ops::kByteLookup)) return false;
  const auto* axis = Attr(*node.proto, "axis");
  return axis == nullptr || axis->i() == 1 || axis->i() == -3;
}

// A 2-D QLinearConv (rank-4 constant 8-bit weights) of one output: what the channels-last kernel
// runs. Any other (1-D, 3-D, weights computed at run) keeps the plain kernel.
bool ConvertsConv(const Graph& g, const Node& node) {
  if (!IsOp(node, "QLinearConv")) return false;
  const auto& n = *node.proto;
  if (n.output_size() != 1 || n.input_size() < 8) return false;
  auto w = g.constants.find(n.input(3));
  if (w == g.constants.end() || w->second.rank() != 4 || !Is8Bit(w->second.dtype())) return false;
  if (const auto* k = Attr(n, "kernel_shape"); k != nullptr && k->ints_size() != 2) return false;
  // A grouped convolution runs one GEMM per group, with the group's output channels as columns:
  // narrow groups (1 column of 16 lanes) stay on the plain kernel. Depthwise ones (one input and
  // one output channel per group) have a kernel of their own (ops/math/quant_depthwise.h).
  if (const auto* group = Attr(n, "group"); group != nullptr && group->i() != 1) {
    if (group->i() < 1 || w->second.dim(0) % group->i() != 0) return false;
    const bool depthwise = w->second.dim(1) == 1 && w->second.dim(0) == group->i();
    if (!depthwise && (w->second.dim(1) < 16 || w->second.dim(0) / group->i() < 16)) return false;
  }
  return Is8Bit(TypeOf(g, n.input(0)));
}

using Values = std::set<std::string>;  // values produced channels-last

// A scalar constant that broadcasts against a rank-4 value without raising its rank.
bool IsScalarOperand(const Graph& g, const onnx::NodeProto& n, int i) {
  return IsScalarConstant(g, n, i) && g.constants.at(n.input(i)).rank() <= 4;
}

// Ops that compute each element from the same element of their operands (and scalars): on
// channels-last values they give the channels-last result. Per-tensor DequantizeLinear and
// QuantizeLinear are among them (their scale and zero point scalars), so a quantized model's float
// ops between two quantized convolutions (DQ -> LeakyRelu / HardSigmoid * x / Add -> Q, what a
// quantizer leaves in float) join the region instead of a Transpose pair around each convolution
// (a PP-OCR detector quantized to QDQ: 85 Transposes, 19% of its time).
bool IsPointwise(const Node& node) {
  static const std::set<std::string> kOnnx = {
      "Abs", "Add", "Celu", "Clip", "DequantizeLinear", "Div", "Elu", "Erf", "Exp", "Gelu", "HardSigmoid",
      "HardSwish", "LeakyRelu", "Log", "Max", "Min", "Mish", "Mul", "Neg", "Pow", "QuantizeLinear", "Reciprocal",
      "Relu", "Selu", "Sigmoid", "Softplus", "Softsign", "Sqrt", "Sub", "Tanh", "ThresholdedRelu"};
  if (node.domain.empty()) return kOnnx.count(node.op_type()) != 0;
  return IsInternal(node, internal_ops::kElementwiseChain);
}

// A plain value that can enter the region through a Transpose of its own, so that the op reading
// it with a region value runs channels-last too: one proven 4-D (graph/value_rank.h). A value of
// lower rank (a per-channel [C, 1, 1] constant) broadcasts along other axes channels-last, and one
// of unknown rank may be such a value.
bool CanEnter(ValueRanks& ranks, const std::string& v) { return ranks.Of(v) == 4; }

// A pointwise op whose every operand is a region value, a scalar or a value that can enter, at
// least one a region value; `*enters` tells whether one enters. (A QuantizeLinear /
// DequantizeLinear with a block_size is not pointwise.)
bool FollowsTheRegion(const Graph& g, const Node& node, const Values& nhwc, ValueRanks& ranks, bool* enters) {
  const auto& n = *node.proto;
  if (!IsPointwise(node) || n.output_size() != 1) return false;
  if (const auto* block = Attr(n, "block_size"); block != nullptr && block->i() != 0) return false;
  if (const auto* rank = Attr(n, "rank"); node.domain == kOnnxflowDomain && (rank == nullptr || rank->i() > 4)) {
    return false;  // ElementwiseChain: the rank of its largest scalar
  }
  bool region = false;
  for (int i = 0; i < n.input_size(); ++i) {
    if (!HasInput(n, i)) continue;
    if (nhwc.count(n.input(i)) != 0) {
      region = true;
    } else if (IsScalarOperand(g, n, i)) {
      continue;
    } else if (CanEnter(ranks, n.input(i))) {
      *enters = true;
    } else {
      return false;
    }
  }
  return region;
}

// The constant pads of a Pad (opset 11 on, over every axis of a 4-D value) that the region can
// take in channels-last order, whatever its mode (each axis is padded on its own); null otherwise.
const Tensor* PadsOf(const Graph& g, const Node& node) {
  const auto& n = *node.proto;
  if (!IsOp(node, "Pad") || node.opset < 11 || n.output_size() != 1 || !HasInput(n, 1) || HasInput(n, 3)) {
    return nullptr;
  }
  auto pads = g.constants.find(n.input(1));
  if (pads == g.constants.end() || pads->second.dtype() != DataType::kInt64 || pads->second.rank() != 1 ||
      pads->second.size() != 8) {
    return nullptr;
  }
  return &pads->second;
}

// A Split over the channels of a 4-D value (opset 1's axis 0 by default), of any element type.
bool SplitsChannels(const Node& node) {
  if (!IsOp(node, "Split") || node.proto->output_size() < 1) return false;
  const auto* axis = Attr(*node.proto, "axis");
  return axis != nullptr && (axis->i() == 1 || axis->i() == -3);
}

// The scales (input 2) and sizes (input 3) of a nearest Resize that the region can take in
// channels-last order: constants of 4 entries, or absent or empty. Nearest picks each output
// element from one input element per axis, so permuting the axes permutes the result exactly (a
// linear one rounds between its per-axis passes, and its float image path wants NCHW). Not with
// `axes` (opset 18), a crop's roi, or an aspect-ratio policy.
bool ResizesInRegion(const Graph& g, const Node& node) {
  const auto& n = *node.proto;
  if (!IsOp(node, "Resize") || node.opset < 11 || n.output_size() != 1 || !HasInput(n, 0)) return false;
  const auto* mode = Attr(n, "mode");
  const auto* coord = Attr(n, "coordinate_transformation_mode");
  const auto* policy = Attr(n, "keep_aspect_ratio_policy");
  if ((mode != nullptr && mode->s() != "nearest") || (coord != nullptr && coord->s() == "tf_crop_and_resize") ||
      Attr(n, "axes") != nullptr || (policy != nullptr && policy->s() != "stretch")) {
    return false;
  }
  int given = 0;
  for (int i : {2, 3}) {
    if (!HasInput(n, i)) continue;
    auto c = g.constants.find(n.input(i));
    if (c == g.constants.end() || c->second.rank() != 1) return false;
    if (c->second.size() == 0) continue;
    if (c->second.size() != 4) return false;
    ++given;
  }
  return given == 1;
}

// The role of `node` given the region values before it. `*enters` is set when the node joins
// with an operand from outside that enters through a Transpose (a residual's shortcut: a QDQ
// HiFi-GAN's stream, ResNet's identity, a C2f's halves), which only pays when a region op reads
// the node's output (QuantLayoutPass::Prune).
Role RoleOf(const Graph& g, const Node& node, const Values& nhwc, ValueRanks& ranks, bool* enters) {
  if (ConvertsConv(g, node)) return Role::kConv;
  const auto& n = *node.proto;
  // A C2f block's halves (YOLOv8's): the Split stays in the region, each half goes on in it.
  if (SplitsChannels(node) && node.subgraphs.empty() && HasInput(n, 0) && nhwc.count(n.input(0)) != 0) {
    return Role::kSplit;
  }
  if (n.input_size() == 0 || n.output_size() != 1 || !node.subgraphs.empty()) return Role::kPlain;
  auto in = [&](int i) { return HasInput(n, i) && nhwc.count(n.input(i)) != 0; };
  // Data operands `data`, each in the region or able to enter, at least one in the region.
  auto joins = [&](const std::vector<int>& data) {
    bool region = false, entering = false;
    for (int i : data) {
      if (in(i)) {
        region = true;
      } else if (HasInput(n, i) && CanEnter(ranks, n.input(i))) {
        entering = true;
      } else {
        return false;
      }
    }
    *enters = region && entering;
    return region;
  };
  if (IsMs(node, "QLinearAdd") || IsMs(node, "QLinearMul")) {
    return n.input_size() >= 8 && joins({0, 3}) ? Role::kLayoutFree : Role::kPlain;
  }
  if (IsMs(node, "QLinearConcat")) {  // its data are inputs 2, 5, 8, ...
    const auto* axis = Attr(n, "axis");
    if (axis == nullptr || (axis->i() != 1 && axis->i() != -3) || n.input_size() < 5) return Role::kPlain;
    std::vector<int> data;
    for (int i = 2; i < n.input_size(); i += 3) data.push_back(i);
    return joins(data) ? Role::kConcat : Role::kPlain;
  }
  if (FollowsTheRegion(g, node, nhwc, ranks, enters)) return Role::kLayoutFree;
  *enters = false;
  if (!in(0)) return Role::kPlain;
  if (IsOp(node, "Max") && n.input_size() == 2 && IsScalarConstant(g, n, 1)) return Role::kLayoutFree;
  if (IsChannelsLastLookup(node)) return Role::kLayoutFree;
  // MelGAN's reflection Pad along the length between the float ops a quantizer leaves in each
  // residual block (DQ -> LeakyRelu -> Pad -> Q -> conv): two Transposes a block where it left.
  if (PadsOf(g, node) != nullptr) return Role::kPad;
  // An FPN's upsampling between quantized convolutions (YOLO's neck).
  if (ResizesInRegion(g, node)) return Role::kResize;
  // A QDQ model's LeakyRelu / Sigmoid between quantized convolutions (a vocoder's, after each
  // upsampling and in every residual block): a byte per element, its parameters scalars.
  if (IsQLinearPointwiseUnary(node)) return Role::kLayoutFree;
  if (IsOp(node, "MaxPool") && node.opset >= 12 && Is8Bit(TypeOf(g, n.input(0)))) {
    const auto* k = Attr(n, "kernel_shape");
    const auto* order = Attr(n, "storage_order");
    return k != nullptr && k->ints_size() == 2 && (order == nullptr || order->i() == 0) ? Role::kMaxPool
                                                                                       : Role::kPlain;
  }
  if (IsMs(node, "QLinearGlobalAveragePool") || IsMs(node, "QLinearAveragePool")) {
    const auto* last = Attr(n, "channels_last");
    if (last != nullptr && last->i() != 0) return Role::kPlain;
    if (IsMs(node, "QLinearAveragePool")) {
      const auto* k = Attr(n, "kernel_shape");
      if (k == nullptr || k->ints_size() != 2) return Role::kPlain;
    }
    return Role::kPool;
  }
  return Role::kPlain;
}

// The inputs of a converted node that are data (read channels-last); the others are parameters.
bool IsDataInput(const Graph& g, const Node& node, Role role, int i) {
  switch (role) {
    case Role::kConv: return i == 0;
    case Role::kConcat: return i >= 2 && (i - 2) % 3 == 0;
    case Role::kLayoutFree:
      if (IsMs(node, "QLinearAdd") || IsMs(node, "QLinearMul")) return i == 0 || i == 3;
      if (IsPointwise(node)) return !IsScalarOperand(g, *node.proto, i);
      return i == 0;
    default: return i == 0;
  }
}

// A constant int64 shape of rank `rank` at input 1 of Reshape `n` (opset 5 on, allowzero off).
const Tensor* ReshapeTarget(const Graph& g, const Node& n, int64_t rank) {
  if (!IsOp(n, "Reshape") || n.proto->input_size() != 2 || n.proto->output_size() != 1) return nullptr;
  if (const auto* zero = Attr(*n.proto, "allowzero"); zero != nullptr && zero->i() != 0) return nullptr;
  auto c = g.constants.find(n.proto->input(1));
  if (c == g.constants.end() || c->second.dtype() != DataType::kInt64 || c->second.rank() != 1 ||
      c->second.size() != rank) {
    return nullptr;
  }
  return &c->second;
}

bool HasPerm(const Node& n, const std::vector<int64_t>& perm) {
  const auto* p = Attr(*n.proto, "perm");
  return IsOp(n, "Transpose") && p != nullptr && std::vector<int64_t>(p->ints().begin(), p->ints().end()) == perm;
}

class QuantLayoutPass {
 public:
  // Ranks are asked in graph order and every region value is known 4-D, so the walks stay short
  // (a vocoder's stream after its float ConvTranspose: 4 producers up to a region value).
  explicit QuantLayoutPass(Graph* g) : g_(g), ranks_(*g) {}

  Status Run() {
    // Most graphs (and every subgraph level of a deeply nested one) hold no quantized
    // convolution: one pass over the nodes, before any order or name set is built.
    bool any = false;
    for (const Node& node : g_->nodes) any = any || ConvertsConv(*g_, node);
    if (!any) return Status::Ok();
    names_.emplace(*g_);
    const std::vector<Id> order = g_->nodes.Order();
    std::vector<Role> roles;
    Values nhwc;
    bool any_conv = false;
    for (Id id : order) {
      const Node& node = g_->nodes[id];
      const auto pending = shuffle_roles_.find(id);
      bool enters = false;
      roles.push_back(pending != shuffle_roles_.end() ? Role::kShuffle
                      : MatchShuffle(id, nhwc)         ? Role::kShuffle
                                                       : RoleOf(*g_, node, nhwc, ranks_, &enters));
      any_conv = any_conv || roles.back() == Role::kConv;
      if (enters) entered_.insert(id);
      if (roles.back() != Role::kPlain) {
        for (const std::string& out : node.proto->output()) {
          if (out.empty()) continue;
          nhwc.insert(out);
          ranks_.Assume(out, 4);
          channels_[out] = ChannelsOut(id, roles.back());
        }
      }
    }
    if (!any_conv) return Status::Ok();
    Prune(order, &roles, &nhwc);
    PullEntries(order, &roles, &nhwc);
    // Region values plain readers (nodes, subgraphs, graph outputs) still need in their layout.
    std::set<std::string> read_plain;
    for (size_t i = 0; i < order.size(); ++i) {
      const Node& node = g_->nodes[order[i]];
      for (int k = 0; k < node.proto->input_size(); ++k) {
        if (roles[i] == Role::kPlain || !IsDataInput(*g_, node, roles[i], k)) read_plain.insert(node.proto->input(k));
      }
      for (const auto& v : node.implicit_inputs) read_plain.insert(v);
    }
    for (const auto& out : g_->outputs) read_plain.insert(out.name);

    Patch patch;
    for (size_t i = 0; i < order.size(); ++i) {
      if (roles[i] == Role::kPlain) continue;
      const Id id = order[i];
      const Node& node = g_->nodes[id];
      auto proto = std::make_shared<onnx::NodeProto>(*node.proto);
      for (int k = 0; k < proto->input_size(); ++k) {
        if (proto->input(k).empty() || !IsDataInput(*g_, node, roles[i], k)) continue;
        const std::string& v = proto->input(k);
        proto->set_input(k, nhwc.count(v) != 0 ? NhwcName(v, &patch) : ToNhwc(v, id, &patch));
      }
      for (int o = 0; o < proto->output_size(); ++o) {
        if (!proto->output(o).empty()) proto->set_output(o, NhwcName(node.proto->output(o), &patch));
      }
      Node converted = WithProto(node, proto);
      Convert(roles[i], proto.get(), &converted);
      if (roles[i] == Role::kShuffle) ConvertShuffle(id, proto.get(), &patch);
      if (roles[i] == Role::kPad) proto->set_input(1, NhwcPermuted(node.proto->input(1), &patch));
      if (roles[i] == Role::kResize) {
        for (int k : {2, 3}) {
          if (HasInput(*proto, k) && g_->constants.at(proto->input(k)).size() == 4) {
            proto->set_input(k, NhwcPermuted(proto->input(k), &patch));
          }
        }
      }
      patch.replaced.push_back(id);
      patch.AddAt(std::move(converted), id);
      for (const std::string& out : node.proto->output()) {
        if (!out.empty() && read_plain.count(out) != 0) {
          patch.AddAt(TransposeNode(NhwcName(out, &patch), out, {0, 3, 1, 2}), id);
        }
      }
    }
    ONNXFLOW_RETURN_IF_ERROR(ApplyPatch(g_, std::move(patch), "UseChannelsLastQuant"));
    return CheckAcyclic(*g_, "UseChannelsLastQuant");
  }

 private:
  // A pointwise op stays in the region only on the way to a region op that reads it as data:
  // one whose value only plain nodes (or the graph's outputs) read would just move the boundary's
  // Transpose onto its output, a float one four times the bytes. So does an op that an operand
  // entered (its Transpose in, then one out, where staying plain costs one). From the last node
  // back, so that a chain of them leaves the region from its end.
  void Prune(const std::vector<Id>& order, std::vector<Role>* roles, Values* nhwc) {
    index_.clear();
    for (size_t i = 0; i < order.size(); ++i) index_[order[i]] = i;
    for (size_t i = order.size(); i-- > 0;) {
      const Node& node = g_->nodes[order[i]];
      const bool may_leave = ((*roles)[i] == Role::kLayoutFree && IsPointwise(node)) || entered_.count(order[i]) != 0;
      if ((*roles)[i] == Role::kPlain || !may_leave) continue;
      const std::string& out = node.proto->output(0);
      if (!ReadInRegion(out, *roles, /*only=*/false)) {
        (*roles)[i] = Role::kPlain;
        nhwc->erase(out);
      }
    }
  }

  // Whether a region op reads `out` as data (`only`: and nothing else reads it: no plain node, no
  // subgraph, no graph output).
  bool ReadInRegion(const std::string& out, const std::vector<Role>& roles, bool only) const {
    bool read_in_region = false;
    for (Id r : g_->nodes.Readers(out)) {
      const size_t j = index_.at(r);
      const Node& reader = g_->nodes[r];
      for (int k = 0; k < reader.proto->input_size(); ++k) {
        if (reader.proto->input(k) != out) continue;
        const bool data = roles[j] != Role::kPlain && IsDataInput(*g_, reader, roles[j], k);
        if (only && !data) return false;
        read_in_region |= data;
      }
      if (only && !reader.implicit_inputs.empty()) {
        for (const auto& v : reader.implicit_inputs) {
          if (v == out) return false;
        }
      }
    }
    if (only) {
      for (const auto& o : g_->outputs) {
        if (o.name == out) return false;
      }
    }
    return read_in_region;
  }

  // A plain op of one data operand that the region reads alone, its operand proven 4-D, joins
  // the region, its operand entering instead: the Transpose moves above it. That costs the same
  // bytes for an 8-bit op, a quarter for a DequantizeLinear (bytes, not floats), and one Transpose
  // for all where the operand enters elsewhere too: a vocoder's residual stream feeds a
  // QLinearLeakyRelu -> QLinearConv and the QLinearAdd that closes the block. Not a
  // QuantizeLinear (floats would move instead of bytes). From the last node back, so that a chain
  // of them moves the entry to its start.
  void PullEntries(const std::vector<Id>& order, std::vector<Role>* roles, Values* nhwc) {
    for (size_t i = order.size(); i-- > 0;) {
      if ((*roles)[i] != Role::kPlain) continue;
      const Node& node = g_->nodes[order[i]];
      const auto& n = *node.proto;
      if (n.output_size() != 1 || !node.subgraphs.empty() || !HasInput(n, 0) || IsOp(node, "QuantizeLinear")) continue;
      const bool unary = IsQLinearPointwiseUnary(node) || IsChannelsLastLookup(node) ||
                         (IsOp(node, "Max") && n.input_size() == 2 && IsScalarConstant(*g_, n, 1)) ||
                         IsPointwise(node);
      if (!unary || nhwc->count(n.input(0)) != 0 || !CanEnter(ranks_, n.input(0))) continue;
      if (IsPointwise(node)) {  // as FollowsTheRegion would take it with X in the region, no other operand entering
        bool enters = false;
        if (!FollowsTheRegion(*g_, node, {n.input(0)}, ranks_, &enters) || enters) continue;
      }
      if (!ReadInRegion(n.output(0), *roles, /*only=*/true)) continue;
      (*roles)[i] = Role::kLayoutFree;
      nhwc->insert(n.output(0));
    }
  }

  // The op a converted node becomes.
  static void Convert(Role role, onnx::NodeProto* proto, Node* node) {
    if (role == Role::kConv || role == Role::kMaxPool) {
      proto->set_op_type(role == Role::kConv ? internal_ops::kQLinearConvNhwc : internal_ops::kMaxPoolNhwc);
      proto->set_domain(kOnnxflowDomain);
      node->domain = kOnnxflowDomain;
      node->opset = internal_ops::kVersion;
    } else if (role == Role::kPool) {
      SetIntAttr(proto, "channels_last", 1);
    } else if (role == Role::kConcat || role == Role::kSplit) {
      SetIntAttr(proto, "axis", 3);
    } else if (IsInternal(*node, internal_ops::kByteLookup) && Attr(*proto, "axis") != nullptr) {
      SetIntAttr(proto, "axis", 3);  // a table per channel
    }
  }

  // The channels of region value `v` where the pass knows them (0 where not): a convolution's
  // weights say; the other region ops keep their first input's, a concatenation sums them.
  int64_t Channels(const std::string& v) const {
    auto it = channels_.find(v);
    return it == channels_.end() ? 0 : it->second;
  }
  int64_t ChannelsOut(Id id, Role role) const {
    const auto& n = *g_->nodes[id].proto;
    if (role == Role::kConv) return g_->constants.at(n.input(3)).dim(0);
    if (role == Role::kShuffle) return shuffle_channels_.count(id) ? shuffle_channels_.at(id) : 0;
    if (role == Role::kPad) {
      const int64_t* p = g_->constants.at(n.input(1)).data<int64_t>();
      return p[1] == 0 && p[5] == 0 ? Channels(n.input(0)) : 0;
    }
    if (role == Role::kConcat) {
      int64_t sum = 0;
      for (int i = 2; i < n.input_size(); i += 3) {
        if (Channels(n.input(i)) == 0) return 0;
        sum += Channels(n.input(i));
      }
      return sum;
    }
    return Channels(n.input(0));
  }

  // A channel shuffle of a region value x [N, C, H, W] (ShuffleNet's): Reshape to [N, g, C/g,
  // h, w], Transpose (0, 2, 1, 3, 4), Reshape to [N, C, H', W'] (C or -1). Channels-last it is
  // Reshape to [N, H*W, g, C/g], Transpose (0, 1, 3, 2), Reshape to [N, H', W', C]: the region
  // goes on through it instead of two Transposes of the whole value around it. N is the first
  // target dimension of both Reshapes (0 copies it); the pass takes that dimension for the batch,
  // as a shuffle does. Matched at the first Reshape; the other two get their roles from it.
  bool MatchShuffle(Id id, const Values& nhwc) {
    const Node& first = g_->nodes[id];
    const Tensor* split = ReshapeTarget(*g_, first, 5);
    if (split == nullptr || nhwc.count(first.proto->input(0)) == 0) return false;
    const int64_t c = Channels(first.proto->input(0));
    const int64_t* t = split->data<int64_t>();
    if (c <= 0 || t[0] < 0 || t[1] <= 0 || t[2] <= 0 || t[1] * t[2] != c) return false;
    const Id swap = SoleReader(*g_, first.proto->output(0));
    if (swap == kNone || !HasPerm(g_->nodes[swap], {0, 2, 1, 3, 4})) return false;
    const Id last = SoleReader(*g_, g_->nodes[swap].proto->output(0));
    if (last == kNone) return false;
    const Tensor* merged = ReshapeTarget(*g_, g_->nodes[last], 4);
    if (merged == nullptr) return false;
    const int64_t* m = merged->data<int64_t>();
    if (m[0] != t[0] || (m[1] != c && m[1] != -1) || m[2] <= 0 || m[3] <= 0) return false;
    shuffle_roles_[swap] = shuffle_roles_[last] = Role::kShuffle;
    shuffle_shapes_[id] = {t[0], -1, t[1], t[2]};
    shuffle_shapes_[last] = {m[0], m[2], m[3], c};
    shuffle_channels_[last] = c;
    return true;
  }

  // A shuffle's node channels-last: its Reshape's new target, its Transpose's new order.
  void ConvertShuffle(Id id, onnx::NodeProto* proto, Patch* patch) {
    if (auto shape = shuffle_shapes_.find(id); shape != shuffle_shapes_.end()) {
      const std::string name = names_->Fresh(proto->input(1) + "/nhwc");
      patch->constants.emplace_back(name, Tensor::FromVector<int64_t>({4}, shape->second));
      proto->set_input(1, name);
      return;
    }
    for (auto& a : *proto->mutable_attribute()) {
      if (a.name() != "perm") continue;
      a.clear_ints();
      for (int64_t p : {0, 1, 3, 2}) a.add_ints(p);
    }
  }

  // Constant `v` of per-axis entries in channels-last order, made once: pads [n, c, h, w, n', c',
  // h', w'] -> [n, h, w, c, n', h', w', c'], a Resize's scales or sizes [n, c, h, w] -> [n, h, w, c].
  std::string NhwcPermuted(const std::string& v, Patch* patch) {
    auto it = nhwc_constants_.find(v);
    if (it != nhwc_constants_.end()) return it->second;
    const Tensor& t = g_->constants.at(v);
    Tensor permuted(t.dtype(), {t.size()});
    const size_t element = ElementSize(t.dtype());
    for (int64_t half = 0; half < t.size(); half += 4) {
      const int64_t from[4] = {0, 2, 3, 1};
      for (int64_t a = 0; a < 4; ++a) {
        std::memcpy(static_cast<char*>(permuted.mutable_raw_data()) + (half + a) * element,
                    static_cast<const char*>(t.raw_data()) + (half + from[a]) * element, element);
      }
    }
    const std::string name = names_->Fresh(v + "/nhwc");
    patch->constants.emplace_back(name, std::move(permuted));
    return nhwc_constants_[v] = name;
  }

  // The channels-last name of region value `v` (of v's type).
  std::string NhwcName(const std::string& v, Patch* patch) {
    auto it = nhwc_names_.find(v);
    if (it != nhwc_names_.end()) return it->second;
    return nhwc_names_[v] = Fresh(v + "/nhwc", v, patch);
  }

  // The channels-last copy of plain value `v`, made once before its first region reader `at`.
  std::string ToNhwc(const std::string& v, Id at, Patch* patch) {
    auto it = to_nhwc_.find(v);
    if (it != to_nhwc_.end()) return it->second;
    const std::string name = Fresh(v + "/to_nhwc", v, patch);
    patch->AddAt(TransposeNode(v, name, {0, 2, 3, 1}), at);
    return to_nhwc_[v] = name;
  }

  std::string Fresh(const std::string& base, const std::string& like, Patch* patch) {
    const std::string name = names_->Fresh(base);
    const DataType t = TypeOf(*g_, like);
    if (t != DataType::kUndefined) patch->types.emplace_back(name, t);
    return name;
  }

  static Node TransposeNode(const std::string& from, const std::string& to, const std::vector<int64_t>& perm) {
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type("Transpose");
    proto->set_name("Transpose(" + from + ")");
    proto->add_input(from);
    proto->add_output(to);
    auto* attr = proto->add_attribute();
    attr->set_name("perm");
    attr->set_type(onnx::AttributeProto::INTS);
    for (int64_t p : perm) attr->add_ints(p);
    Node n;
    n.proto = std::move(proto);
    n.opset = 13;
    return n;
  }

  Graph* g_;
  ValueRanks ranks_;              // proven ranks: region values are 4-D
  std::set<Id> entered_;          // region nodes that an operand from outside enters
  std::map<Id, size_t> index_;    // a node's place in the order
  std::optional<NameSet> names_;  // made when there is something to convert
  std::map<std::string, std::string> to_nhwc_, nhwc_names_, nhwc_constants_;
  std::map<std::string, int64_t> channels_;                  // ChannelsOut of region values
  std::map<Id, Role> shuffle_roles_;                         // a matched shuffle's later nodes
  std::map<Id, std::vector<int64_t>> shuffle_shapes_;        // its Reshapes' channels-last targets
  std::map<Id, int64_t> shuffle_channels_;                   // its last Reshape's channels
};

}  // namespace

Status UseChannelsLastQuant(Graph* g) {
  ONNXFLOW_RETURN_IF_ERROR(QuantLayoutPass(g).Run());
  for (const Node& node : g->nodes) {
    for (const auto& [name, sub] : node.subgraphs) ONNXFLOW_RETURN_IF_ERROR(UseChannelsLastQuant(sub.get()));
  }
  return Status::Ok();
}

}  // namespace onnxflow::graph
