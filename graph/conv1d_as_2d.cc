#include "graph/conv1d_as_2d.h"

#include <algorithm>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "graph/rewrite.h"
#include "graph/value_rank.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"

namespace onnxflow::graph {
namespace {

const Tensor* Constant(const Graph& g, const std::string& name) {
  auto it = g.constants.find(name);
  return it == g.constants.end() ? nullptr : &it->second;
}

// The input holding W of a convolution this pass lifts; -1 for any other node.
int WeightInput(const Node& node) {
  if (IsOp(node, "Conv") || IsOp(node, "ConvInteger") || IsOp(node, "ConvTranspose") ||
      IsInternal(node, internal_ops::kFusedConv)) {
    return 1;
  }
  if (IsOp(node, "QLinearConv")) return 3;
  return -1;
}

// An int list attribute of `size` entries each at least `least`; true when absent.
bool IntsOk(const onnx::NodeProto& n, const char* name, int size, int64_t least) {
  const auto* a = Attr(n, name);
  if (a == nullptr) return true;
  if (a->type() != onnx::AttributeProto::INTS || a->ints_size() != size) return false;
  for (int64_t v : a->ints()) {
    if (v < least) return false;
  }
  return true;
}

// The attributes of a 1-D window (a convolution's or a pool's) in their 1-D form: one kernel
// entry, stride and dilation each at least 1, two pads, and pads only with auto_pad NOTSET.
bool IsWindow1d(const onnx::NodeProto& n) {
  if (!IntsOk(n, "kernel_shape", 1, 1) || !IntsOk(n, "strides", 1, 1) || !IntsOk(n, "dilations", 1, 1) ||
      !IntsOk(n, "pads", 2, 0)) {
    return false;
  }
  if (const auto* pad = Attr(n, "auto_pad"); pad != nullptr) {
    const std::string& p = pad->s();
    if (p != "NOTSET" && p != "SAME_UPPER" && p != "SAME_LOWER" && p != "VALID") return false;
    if (p != "NOTSET" && Attr(n, "pads") != nullptr) return false;
  }
  return true;
}

// A 1-D convolution of one output with constant weights ([M, C/g, k]; a ConvTranspose's
// [C, M/g, k]) and attributes of the 1-D form that its plain kernel would accept: the 2-D form of
// height 1 computes the same. Anything else (weights computed at run, attributes the plain kernel
// refuses) keeps the plain kernel and its messages.
bool IsLiftableConv(const Graph& g, const Node& node) {
  const int wi = WeightInput(node);
  if (wi < 0) return false;
  const auto& n = *node.proto;
  if (n.output_size() != 1 || !HasInput(n, 0) || !HasInput(n, wi)) return false;
  const Tensor* w = Constant(g, n.input(wi));
  if (w == nullptr || w->rank() != 3 || w->size() == 0) return false;
  if (!IsWindow1d(n)) return false;
  if (const auto* k = Attr(n, "kernel_shape"); k != nullptr && k->ints(0) != w->dim(2)) return false;
  // W's first axis is M (a convolution's) or C (a ConvTranspose's): the groups divide either.
  if (const auto* group = Attr(n, "group"); group != nullptr && (group->i() < 1 || w->dim(0) % group->i() != 0)) {
    return false;
  }
  if (IsOp(node, "ConvTranspose")) {
    if (!IntsOk(n, "output_padding", 1, 0)) return false;
    // output_shape: the spatial length, or [N, M, L] as some exporters write it.
    const auto* shape = Attr(n, "output_shape");
    if (shape != nullptr && !IntsOk(n, "output_shape", shape->ints_size() == 3 ? 3 : 1, 0)) return false;
  }
  return true;
}

// A 1-D MaxPool or AveragePool of one output (a MaxPool's Indices would number the 4-D
// positions), with the attributes of the 1-D form: the 2-D pool of height 1, whose blocked form
// the layout pass has, computes the same.
bool IsLiftablePool(const Node& node) {
  if (!IsOp(node, "MaxPool") && !IsOp(node, "AveragePool")) return false;
  const auto& n = *node.proto;
  const auto* k = Attr(n, "kernel_shape");
  return n.output_size() == 1 && k != nullptr && k->ints_size() == 1 && IsWindow1d(n);
}

// A Pad (opset 11 on: pads an input) of a rank-3 value by constant pads on the length axis only,
// over every axis (no `axes` input): on [N, C, 1, L] the same pads on axis 3 give the same
// values in any mode (reflect and edge pad nothing on the axis of height 1).
bool IsLiftablePad(const Graph& g, const Node& node) {
  if (!IsOp(node, "Pad") || node.opset < 11) return false;
  const auto& n = *node.proto;
  if (n.output_size() != 1 || !HasInput(n, 1) || HasInput(n, 3)) return false;
  const Tensor* pads = Constant(g, n.input(1));
  if (pads == nullptr || pads->dtype() != DataType::kInt64 || pads->rank() != 1 || pads->size() != 6) return false;
  const int64_t* p = pads->data<int64_t>();
  return p[0] == 0 && p[1] == 0 && p[3] == 0 && p[4] == 0;
}

// The binary elementwise ops (broadcasting from opset 7).
bool IsBinary(const Node& node) {
  static const std::set<std::string> kBinary = {"Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Sum"};
  return node.domain.empty() && kBinary.count(node.op_type()) != 0;
}

// Ops that compute each element from the same element of their operands: on [N, C, 1, L] they
// give the 4-D form of their result when each operand is lifted (or a constant given the 4-D
// broadcast shape).
bool IsElementwise(const Node& node) {
  static const std::set<std::string> kUnary = {
      "Abs", "Cast", "Ceil", "Celu", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Identity",
      "LeakyRelu", "Log", "Mish", "Neg", "Reciprocal", "Relu", "Round", "Selu", "Sigmoid", "Sign", "Softplus",
      "Softsign", "Sqrt", "Tanh", "ThresholdedRelu", "Clip"};
  if (node.domain.empty()) {
    if (kUnary.count(node.op_type()) != 0) return true;
    return IsBinary(node) && node.opset >= 7;  // older ones broadcast by attribute
  }
  if (node.domain == kMsDomain) {
    const std::string& op = node.op_type();
    return (op == "Gelu" || op == "FastGelu" || op == "QuickGelu") && node.proto->input_size() == 1;
  }
  return false;
}

// com.microsoft QLinearAdd / QLinearMul (A, A_scale, A_zero, B, B_scale, B_zero, C_scale[, C_zero]):
// what a QDQ model's elementwise Add and Mul become; A and B broadcast as Add and Mul do.
bool IsQLinearBinary(const Node& node) {
  return (IsMs(node, "QLinearAdd") || IsMs(node, "QLinearMul")) && node.proto->input_size() >= 7;
}

// IsQLinearPointwiseUnary's ops given (X, X_scale, X_zero, Y_scale[, Y_zero]): what a QDQ model's
// activation between quantized convolutions becomes (graph/qdq_fusion.cc).
bool IsQLinearUnary(const Node& node) { return IsQLinearPointwiseUnary(node) && node.proto->input_size() >= 4; }

// A Split or Concat's axis of a rank-3 value, normalized; -1 when absent or out of range.
int64_t Axis3(const onnx::NodeProto& n, int64_t fallback) {
  const auto* a = Attr(n, "axis");
  const int64_t axis = a != nullptr ? a->i() : fallback;
  return axis >= -3 && axis < 3 ? (axis + 3) % 3 : -1;
}

// What a node does in the lifted region.
enum class Role {
  kPlain,     // stays as it is, reading plain (3-D) values
  kConv,      // a 1-D convolution, written as its 2-D form
  kFollows,   // the same op on the 4-D values
};

class LiftPass {
 public:
  explicit LiftPass(Graph* g) : g_(g), ranks_(*g) {}

  Status Run() {
    bool any = false;
    for (const Node& node : g_->nodes) any = any || IsLiftableConv(*g_, node);
    if (!any) return Status::Ok();
    names_.emplace(*g_);
    const std::vector<Id> order = g_->nodes.Order();
    std::vector<Role> roles;
    for (Id id : order) {
      const Node& node = g_->nodes[id];
      roles.push_back(RoleOf(node));
      if (roles.back() == Role::kPlain) continue;
      const int outputs = IsOp(node, "DynamicQuantizeLinear") || IsOp(node, "Dropout") ? 1 : node.proto->output_size();
      for (int k = 0; k < outputs; ++k) {
        lifted_.insert(node.proto->output(k));
        ranks_.Assume(node.proto->output(k), 3);  // 3-D as written, whatever proves it
        types_[node.proto->output(k)] = OutputType(node, k);
      }
    }
    // Lifted values that plain readers (nodes, subgraphs, the graph's outputs) still read as 3-D.
    std::set<std::string> read_plain;
    for (size_t i = 0; i < order.size(); ++i) {
      const Node& node = g_->nodes[order[i]];
      for (int k = 0; k < node.proto->input_size(); ++k) {
        if (roles[i] == Role::kPlain || !IsData(node, roles[i], k)) read_plain.insert(node.proto->input(k));
      }
      for (const auto& v : node.implicit_inputs) read_plain.insert(v);
    }
    for (const auto& out : g_->outputs) read_plain.insert(out.name);

    for (size_t i = 0; i < order.size(); ++i) {
      if (roles[i] == Role::kPlain) continue;
      const Id id = order[i];
      const Node& node = g_->nodes[id];
      auto proto = std::make_shared<onnx::NodeProto>(*node.proto);
      for (int k = 0; k < proto->input_size(); ++k) {
        if (!HasInput(*proto, k) || !IsData(node, roles[i], k)) continue;
        const std::string& v = node.proto->input(k);
        if (lifted_.count(v) != 0) {
          proto->set_input(k, LiftedName(v));
        } else if (Constant(*g_, v) != nullptr) {
          proto->set_input(k, LiftedConstant(v));
        } else if (ranks_.Of(v) == 3) {
          proto->set_input(k, Entry(v, id));
        }  // else a scalar (RoleOf), read as it is

      }
      if (roles[i] == Role::kConv) LiftConv(node, proto.get());
      if (IsLiftablePool(node)) LiftWindow(*node.proto, proto.get());
      if (IsOp(node, "Pad")) proto->set_input(1, LiftedPads(node.proto->input(1)));
      if (IsOp(node, "Split") || IsOp(node, "Concat")) {
        SetAttribute(*proto, "axis", Axis4(Axis3(*node.proto, IsOp(node, "Split") ? 0 : 1)));
      }
      std::vector<std::string> exits;
      for (int k = 0; k < proto->output_size(); ++k) {
        const std::string& out = node.proto->output(k);
        if (out.empty() || lifted_.count(out) == 0) continue;
        proto->set_output(k, LiftedName(out));
        if (read_plain.count(out) != 0) exits.push_back(out);
      }
      patch_.replaced.push_back(id);
      patch_.AddAt(WithProto(node, std::move(proto)), id);
      for (const std::string& out : exits) patch_.AddAt(AxisNode("Squeeze", LiftedName(out), out), id);
    }
    ONNXFLOW_RETURN_IF_ERROR(ApplyPatch(g_, std::move(patch_), "LiftConv1dTo2d"));
    return CheckAcyclic(*g_, "LiftConv1dTo2d");
  }

 private:
  Role RoleOf(const Node& node) {
    const auto& n = *node.proto;
    if (IsLiftableConv(*g_, node)) {
      // X, and a FusedConv's residual, lifted or known to be 3-D (else the plain kernel's
      // refusal of another rank stays).
      for (int k : {0, 3}) {
        if (k == 3 && (WeightInput(node) != 1 || IsOp(node, "ConvInteger"))) continue;
        if (HasInput(n, k) && lifted_.count(n.input(k)) == 0 && ranks_.Of(n.input(k)) != 3) return Role::kPlain;
      }
      return FitsDeclaredInput(node) ? Role::kConv : Role::kPlain;
    }
    if (!node.subgraphs.empty() || n.output_size() < 1 || !HasInput(n, 0)) return Role::kPlain;
    if (!Follows(node)) return Role::kPlain;
    // Every data operand lifted, a constant that broadcasts as a rank-3 value, or a plain value
    // known to be 3-D; at least one lifted.
    bool any = false;
    for (int k = 0; k < n.input_size(); ++k) {
      if (!HasInput(n, k) || !IsData(node, Role::kFollows, k)) continue;
      const std::string& v = n.input(k);
      if (lifted_.count(v) != 0) {
        any = true;
      } else if (const Tensor* c = Constant(*g_, v); c != nullptr) {
        if (c->rank() > 3) return Role::kPlain;
      } else if (const int64_t rank = ranks_.Of(v); rank != 3 && rank != 0) {
        return Role::kPlain;  // a scalar broadcasts alike in 3-D and 4-D; a 3-D value enters
      }
    }
    return any ? Role::kFollows : Role::kPlain;
  }

  // False when X is a graph input whose declared channels or length the convolution cannot take:
  // the plain kernel refuses it at run with the 1-D shapes in its message, as before.
  bool FitsDeclaredInput(const Node& node) const {
    const auto& n = *node.proto;
    const Tensor& w = g_->constants.at(n.input(WeightInput(node)));
    for (const ValueInfo& in : g_->inputs) {
      if (in.name != n.input(0) || !in.has_shape || in.shape.size() != 3) continue;
      const auto* group = Attr(n, "group");
      const int64_t channels = IsOp(node, "ConvTranspose") ? w.dim(0) : w.dim(1) * (group != nullptr ? group->i() : 1);
      if (in.shape[1] >= 0 && in.shape[1] != channels) return false;
      if (IsOp(node, "ConvTranspose")) continue;  // any length: the output grows from it
      const auto* pads = Attr(n, "pads");
      const auto* dilation = Attr(n, "dilations");
      const int64_t padded = in.shape[2] + (pads != nullptr ? pads->ints(0) + pads->ints(1) : 0);
      const int64_t extent = (w.dim(2) - 1) * (dilation != nullptr ? dilation->ints(0) : 1) + 1;
      if (in.shape[2] >= 0 && Attr(n, "auto_pad") == nullptr && padded < extent) return false;
    }
    return true;
  }

  // Ops that run on the 4-D values as they ran on the 3-D ones (their data operands as IsData
  // says; the others are parameters that do not depend on the rank).
  bool Follows(const Node& node) const {
    const auto& n = *node.proto;
    if (IsElementwise(node)) return n.output_size() == 1;
    if (IsOp(node, "QuantizeLinear") || IsOp(node, "DequantizeLinear")) {  // per tensor
      if (const auto* block = Attr(n, "block_size"); block != nullptr && block->i() != 0) return false;
      const Tensor* scale = HasInput(n, 1) ? Constant(*g_, n.input(1)) : nullptr;
      return n.output_size() == 1 && scale != nullptr && scale->size() == 1;
    }
    if (IsOp(node, "DynamicQuantizeLinear")) return true;  // the range of every element
    if (IsOp(node, "Dropout")) return n.output_size() == 1 || g_->nodes.ReadCount(n.output(1)) == 0;
    if (IsOp(node, "BatchNormalization")) {
      const auto* t = Attr(n, "training_mode");
      return n.output_size() == 1 && (t == nullptr || t->i() == 0);
    }
    if (IsOp(node, "InstanceNormalization")) return n.output_size() == 1;  // over every spatial axis
    if (IsLiftablePool(node) || IsLiftablePad(*g_, node)) return true;
    if (IsOp(node, "Split")) {
      if (node.opset < 11 && Attr(n, "split") == nullptr && n.input_size() > 1) return false;
      return Axis3(n, 0) >= 0;
    }
    if (IsOp(node, "Concat")) return Axis3(n, 1) >= 0 && n.output_size() == 1;
    if (IsInternal(node, internal_ops::kElementwiseChain)) {
      const auto* rank = Attr(n, "rank");  // the rank of its largest constant: at most the value's
      return n.output_size() == 1 && (rank == nullptr || rank->i() <= 3);
    }
    if (IsInternal(node, internal_ops::kDequantizeAccumulator)) return n.output_size() == 1;  // channels on axis 1
    if (IsInternal(node, internal_ops::kByteLookup)) return n.output_size() == 1;
    if (IsQLinearBinary(node) || IsQLinearUnary(node)) return n.output_size() == 1;
    return false;
  }

  // Whether input `k` of `node` is data (read 4-D in the region); the others are parameters.
  bool IsData(const Node& node, Role role, int k) const {
    if (role == Role::kConv) return k == 0 || (k == 3 && WeightInput(node) == 1 && !IsOp(node, "ConvInteger"));
    if (IsBinary(node) || IsOp(node, "Concat")) return true;
    if (IsQLinearBinary(node)) return k == 0 || k == 3;
    return k == 0;
  }

  // The element type of output `k` of lifted `node`, for the layout passes that read the lifted
  // value's type (the values fusions wrote have none recorded at load): as the load knew it, or
  // as the op writes it, else its first input's.
  DataType OutputType(const Node& node, int k) const {
    const auto& n = *node.proto;
    if (const DataType t = KnownType(*g_, n.output(k)); t != DataType::kUndefined) return t;
    auto constant_type = [&](int i, DataType fallback) {
      const Tensor* c = HasInput(n, i) ? Constant(*g_, n.input(i)) : nullptr;
      return c != nullptr ? c->dtype() : fallback;
    };
    if (IsOp(node, "QuantizeLinear")) return constant_type(2, DataType::kUint8);
    if (IsOp(node, "QLinearConv")) return constant_type(7, DataType::kUndefined);
    if (IsOp(node, "DynamicQuantizeLinear")) return DataType::kUint8;
    if (IsOp(node, "ConvInteger")) return DataType::kInt32;
    if (IsOp(node, "DequantizeLinear") || IsInternal(node, internal_ops::kDequantizeAccumulator)) {
      return DataType::kFloat;
    }
    if (IsOp(node, "Cast")) return DataType::kUndefined;
    const std::string& x = n.input(0);
    auto it = types_.find(x);
    return it != types_.end() ? it->second : KnownType(*g_, x);
  }

  // Writes `proto`, a lifted 1-D convolution, as its 2-D form: W [M, C/g, 1, k] (the same bytes;
  // a ConvTranspose's [C, M/g, 1, k]).
  void LiftConv(const Node& node, onnx::NodeProto* proto) {
    const int wi = WeightInput(node);
    const Tensor& w = g_->constants.at(node.proto->input(wi));
    const std::string name = names_->Fresh(node.proto->input(wi) + "/2d");
    patch_.constants.emplace_back(name, w.Reshaped({w.dim(0), w.dim(1), 1, w.dim(2)}));
    proto->set_input(wi, name);
    const auto& n = *node.proto;
    LiftWindow(n, proto);
    if (const auto* p = Attr(n, "output_padding"); p != nullptr) {
      SetAttribute(*proto, "output_padding", std::vector<int64_t>{0, p->ints(0)});
    }
    if (const auto* s = Attr(n, "output_shape"); s != nullptr) {
      const bool full = s->ints_size() == 3;  // [N, M, L]
      SetAttribute(*proto, "output_shape", full ? std::vector<int64_t>{s->ints(0), s->ints(1), 1, s->ints(2)}
                                                : std::vector<int64_t>{1, s->ints(0)});
    }
  }

  // A 1-D window's attributes (a convolution's or a pool's) in their 2-D form of height 1.
  static void LiftWindow(const onnx::NodeProto& n, onnx::NodeProto* proto) {
    if (const auto* k = Attr(n, "kernel_shape"); k != nullptr) SetAttribute(*proto, "kernel_shape", std::vector<int64_t>{1, k->ints(0)});
    if (const auto* s = Attr(n, "strides"); s != nullptr) SetAttribute(*proto, "strides", std::vector<int64_t>{1, s->ints(0)});
    if (const auto* d = Attr(n, "dilations"); d != nullptr) SetAttribute(*proto, "dilations", std::vector<int64_t>{1, d->ints(0)});
    if (const auto* p = Attr(n, "pads"); p != nullptr) SetAttribute(*proto, "pads", std::vector<int64_t>{0, p->ints(0), 0, p->ints(1)});
  }

  // A lifted Pad's pads [0, 0, b, 0, 0, e] as [0, 0, 0, b, 0, 0, 0, e].
  std::string LiftedPads(const std::string& v) {
    auto it = lifted_pads_.find(v);
    if (it != lifted_pads_.end()) return it->second;
    const int64_t* p = g_->constants.at(v).data<int64_t>();
    const std::string name = names_->Fresh(v + "/2d");
    patch_.constants.emplace_back(name, Tensor::FromVector<int64_t>({8}, {0, 0, 0, p[2], 0, 0, 0, p[5]}));
    return lifted_pads_[v] = name;
  }

  static int64_t Axis4(int64_t axis3) { return axis3 < 2 ? axis3 : 3; }

  // The 4-D name of lifted value `v` (float or 8-bit, as `v`).
  std::string LiftedName(const std::string& v) {
    auto it = lifted_names_.find(v);
    if (it != lifted_names_.end()) return it->second;
    const std::string name = names_->Fresh(v + "/2d");
    if (auto t = types_.find(v); t != types_.end() && t->second != DataType::kUndefined) {
      patch_.types.emplace_back(name, t->second);
    }
    return lifted_names_[v] = name;
  }

  // A constant operand with the 4-D broadcast shape of its rank-3 one: leading 1s up to rank 3,
  // then 1 at axis 2. A single number needs no change.
  std::string LiftedConstant(const std::string& v) {
    const Tensor& c = g_->constants.at(v);
    if (c.rank() <= 1 && c.size() == 1) return v;
    auto it = lifted_constants_.find(v);
    if (it != lifted_constants_.end()) return it->second;
    Shape shape(3 - c.rank(), 1);
    shape.insert(shape.end(), c.shape().begin(), c.shape().end());
    shape.insert(shape.begin() + 2, 1);
    const std::string name = names_->Fresh(v + "/2d");
    patch_.constants.emplace_back(name, c.Reshaped(shape));
    return lifted_constants_[v] = name;
  }

  // The 4-D form of plain 3-D value `v`, made once before its first lifted reader `at`.
  std::string Entry(const std::string& v, Id at) {
    auto it = entries_.find(v);
    if (it != entries_.end()) return it->second;
    const std::string name = names_->Fresh(v + "/2d");
    if (const DataType t = KnownType(*g_, v); t != DataType::kUndefined) patch_.types.emplace_back(name, t);
    patch_.AddAt(AxisNode("Unsqueeze", v, name), at);
    return entries_[v] = name;
  }

  // Unsqueeze or Squeeze (opset 13) of axis 2: into and out of the region.
  Node AxisNode(const char* op, const std::string& from, const std::string& to) {
    if (axis_.empty()) {
      axis_ = names_->Fresh("conv1d_as_2d/axis");
      patch_.constants.emplace_back(axis_, Tensor::FromVector<int64_t>({1}, {2}));
    }
    auto proto = std::make_shared<onnx::NodeProto>();
    proto->set_op_type(op);
    proto->set_name(std::string(op) + "(" + from + ")");
    proto->add_input(from);
    proto->add_input(axis_);
    proto->add_output(to);
    Node n;
    n.proto = std::move(proto);
    n.opset = 13;
    return n;
  }

  Graph* g_;
  std::optional<NameSet> names_;
  Patch patch_;
  std::set<std::string> lifted_;  // values (by their 3-D name) the region computes in 4-D
  ValueRanks ranks_;  // proven ranks (graph/value_rank.h); the lifted values are 3-D
  std::map<std::string, DataType> types_;  // their element types, where known
  std::map<std::string, std::string> lifted_names_, lifted_constants_, lifted_pads_, entries_;
  std::string axis_;
};

}  // namespace

Status LiftConv1dTo2d(Graph* g) {
  ONNXFLOW_RETURN_IF_ERROR(LiftPass(g).Run());
  for (const Node& node : g->nodes) {
    for (const auto& [name, sub] : node.subgraphs) ONNXFLOW_RETURN_IF_ERROR(LiftConv1dTo2d(sub.get()));
  }
  return Status::Ok();
}

}  // namespace onnxflow::graph
