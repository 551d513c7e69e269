#include "graph/attention_fusion.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <unordered_set>

#include "graph/heads_shapes.h"
#include "graph/value_rank.h"
#include "graph/fusion.h"
#include "ops/contrib/fused_attention.h"
#include "ops/framework/domains.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/internal_ops.h"
#include "ops/math/float_view.h"

namespace onnxflow::graph {
namespace {

// The producer of `value` when the pattern is its one reader (not a graph output, not a
// subgraph's implicit input); kNone otherwise.
Id Inner(const Graph& g, const std::string& value) { return SoleReaderProducer(g, value); }

// A float constant of one element and rank <= 4 (it cannot raise the scores' rank).
bool ScalarConstant(const Graph& g, const onnx::NodeProto& n, int input, float* value) {
  const Tensor* c = FloatConstant(g, n, input);
  if (c == nullptr || c->size() != 1 || c->rank() > 4) return false;
  *value = c->data<float>()[0];
  return true;
}

// Walks back from `*value` over Mul/Div by a scalar constant (x * c, c * x, x / c), read by the
// pattern alone, multiplying `*scale` and collecting the nodes.
void PeelScales(const Graph& g, std::string* value, float* scale,
                std::vector<Id>* nodes) {
  for (;;) {
    const Id p = Inner(g, *value);
    if (p == kNone) return;
    const Node& n = g.nodes[p];
    const auto& pr = *n.proto;
    if (n.opset < 7 || pr.input_size() != 2 || pr.output_size() != 1) return;  // older ops broadcast by attribute
    float c = 0.0f;
    if (IsOp(n, "Div") && ScalarConstant(g, pr, 1, &c) && c != 0.0f) {
      *scale /= c;
      *value = pr.input(0);
    } else if (IsOp(n, "Mul") && ScalarConstant(g, pr, 1, &c)) {
      *scale *= c;
      *value = pr.input(0);
    } else if (IsOp(n, "Mul") && ScalarConstant(g, pr, 0, &c)) {
      *scale *= c;
      *value = pr.input(1);
    } else {
      return;
    }
    nodes->push_back(p);
  }
}

// `value` (B, N, S, D) is Transpose(x, [0, 2, 1, 3]) read by the pattern alone: x, the (B, S, N, D)
// tensor the kernel reads in place.
bool HeadsOf(const Graph& g, const std::string& value,
             std::string* x, std::vector<Id>* nodes) {
  const Id t = Inner(g, value);
  if (t == kNone || !IsTranspose(g.nodes[t], {0, 2, 1, 3})) return false;
  *x = g.nodes[t].proto->input(0);
  nodes->push_back(t);
  return true;
}

// A shape vector entry read off a tensor's shape at run time (a batch or sequence length).
constexpr int64_t kFromShape = std::numeric_limits<int64_t>::min();

// The entries of a shape operand (Expand's, Reshape's): an int64 constant, or, as exporters write
// shapes that depend on the batch and sequence, Concat(axis 0) of constants and dimensions read off
// shapes at run time (those entries kFromShape). Empty when neither.
std::vector<int64_t> ShapeEntries(const Graph& g, const std::string& name) {
  std::vector<Dim> dims;
  if (!ShapeOperandEntries(g, name, &dims)) return {};
  std::vector<int64_t> v;
  for (const Dim& d : dims) {
    if (!d.of.empty() && d.value != 1) return {};  // a product of dimensions is no batch or sequence
    v.push_back(d.of.empty() ? d.value : kFromShape);
  }
  return v;
}

// When `value` is a decoder's key-value cache for this step, (B, N, S, D): Concat(past, new, axis 2
// or -2) with the past a graph input declared 4-D, or Casts of one (the step's present output; in a merged
// decoder's branches, the main graph's input: Graph::outer_inputs), the past's declared shape (-1
// where dynamic); else nullptr. The kernel reads the cache in place in that layout; the
// Concat stays, as it writes the present output the caller keeps.
const std::vector<int64_t>* CacheShape(const Graph& g, const std::string& value) {
  Id c = g.nodes.Producer(value);
  // A float16 decoder's cache is extended in 16 bits and widened for the float attention
  // (ComputeHalfInFloat): the kernel reads the widened present.
  if (c != kNone && IsOp(g.nodes[c], "Cast")) c = g.nodes.Producer(g.nodes[c].proto->input(0));
  if (c == kNone) return nullptr;
  const auto& n = *g.nodes[c].proto;
  if (!IsOp(g.nodes[c], "Concat") || n.input_size() < 2 || n.output_size() != 1) return nullptr;
  const int64_t axis = IntAttr(n, "axis", 0);
  if (axis != 2 && axis != -2) return nullptr;
  for (std::string in : n.input()) {
    // A float16 model's cache reaches the Concat through Casts (widened to float by
    // ComputeHalfInFloat, or rounded to half behind a float input); they keep its shape. Two at
    // most: a hostile chain of Casts before many Concats must not cost their product.
    for (int casts = 0; casts < 2; ++casts) {
      const Id cast = g.nodes.Producer(in);
      if (cast == kNone || !IsOp(g.nodes[cast], "Cast")) break;
      in = g.nodes[cast].proto->input(0);
    }
    for (const ValueInfo& info : g.inputs) {
      if (info.name == in && info.has_shape && info.shape.size() == 4) return &info.shape;
    }
    if (auto outer = g.outer_inputs.find(in);
        outer != g.outer_inputs.end() && outer->second.has_shape && outer->second.shape.size() == 4) {
      return &outer->second.shape;
    }
  }
  return nullptr;
}

// K or V as the kernel reads it: `x` (B, S, N, D) behind the pattern's Transpose into heads, or a
// cache read as it is, (B, N, S, D) (`bnsd`), its KV heads each serving `repeat` query heads.
struct KeysOrValues {
  std::string x;
  bool bnsd = false;
  int64_t repeat = 1;
  int part = -1;  // >= 0: part `part` of a packed projection (PackedPartOf), x the projection
};

// One projection of q, k and v together, as exports with one qkv Linear (timm's ViT) write it:
// qkv.reshape(B, S, 3, N, D).permute(2, 0, 3, 1, 4), then unbind(0). The kernel reads the
// projection (B, S, 3 N D) in place, packed.
struct PackedSource {
  std::string p;  // the projection
  Id reshape = kNone, transpose = kNone, split = kNone;  // shared by the three parts
  int64_t batch = 0, seq = 0, heads = 0, head_size = 0;  // the Reshape's entries
};

// The input x of P = MatMul(x, W) [+ constant bias] with a 2-D constant W, whose leading
// dimensions are P's; empty otherwise.
std::string ProjectedInput(const Graph& g, const std::string& p) {
  Id n = g.nodes.Producer(p);
  if (n != kNone && IsOp(g.nodes[n], "Add") && g.nodes[n].proto->input_size() == 2) {
    const auto& add = *g.nodes[n].proto;
    const int product = g.constants.count(add.input(1)) ? 0 : g.constants.count(add.input(0)) ? 1 : -1;
    n = product < 0 ? kNone : g.nodes.Producer(add.input(product));
  }
  if (n == kNone || !IsOp(g.nodes[n], "MatMul") || g.nodes[n].proto->input_size() != 2) return "";
  const Tensor* w = WeightConstant(g, *g.nodes[n].proto, 1);
  return w != nullptr && w->rank() == 2 ? g.nodes[n].proto->input(0) : "";
}

std::vector<int64_t> SqueezeAxes(const Graph& g, const onnx::NodeProto& n) {
  if (n.input_size() == 2) return Int64Constant(g, n.input(1));
  const auto* a = Attr(n, "axes");
  return a != nullptr ? std::vector<int64_t>(a->ints().begin(), a->ints().end()) : std::vector<int64_t>{};
}

// The Split whose output `*part` is `value` (read by the pattern alone): three ones on `axis` of
// a rank-5 tensor; kNone otherwise.
Id SplitOf(const Graph& g, const std::string& value, int64_t axis, int* part) {
  const Id split = Inner(g, value);
  if (split == kNone || !IsOp(g.nodes[split], "Split")) return kNone;
  const auto& sp = *g.nodes[split].proto;
  std::vector<int64_t> sizes = {1, 1, 1};  // an equal split of the 3 (or num_outputs 3)
  if (sp.input_size() >= 2 && !sp.input(1).empty()) {
    sizes = Int64Constant(g, sp.input(1));
  } else if (const auto* a = Attr(sp, "split"); a != nullptr) {
    sizes.assign(a->ints().begin(), a->ints().end());
  }
  const int64_t at = IntAttr(sp, "axis", 0);
  if ((at != axis && at != axis - 5) || sp.output_size() != 3 || sizes != std::vector<int64_t>{1, 1, 1}) return kNone;
  for (int i = 0; i < 3; ++i) {
    if (sp.output(i) == value) *part = i;
  }
  return split;
}

// `value` is part `*part` of the packed source `*src` (one source for all parts), R below being
// Reshape(P, [d0, d1, 3, N, D]):
//   in heads, (B, N, S, D) (`heads`): Gather(T, i) on axis 0 or Squeeze(Split(T, axis 0)[i], 0)
//     with T = Transpose(R, [2, 0, 3, 1, 4]) (the export's unbind), or
//     Squeeze(Transpose(Split(R, axis 2)[i], [2, 0, 3, 1, 4]), 0) (ONNX Runtime's transpose
//     optimizer moves the Transpose after the Split);
//   as (B, S, N, D), to be put in heads by the caller's Transpose: Squeeze(Split(R, axis 2)[i], 2).
// Each value between is read by the pattern alone (T by its three parts). The part's own nodes go
// to `nodes`; R, T and the Split are the caller's to add once.
bool PackedPartOf(const Graph& g, const std::string& value, bool heads, PackedSource* src, int* part,
                  std::vector<Id>* nodes) {
  const Id n = Inner(g, value);
  if (n == kNone) return false;
  const auto& pr = *g.nodes[n].proto;
  std::vector<Id> own = {n};
  Id transpose = kNone, split = kNone;
  std::string r;
  *part = -1;
  // T = Transpose(R, [2, 0, 3, 1, 4]) read by `readers` nodes: R.
  auto through_t = [&](const std::string& t, size_t readers) {
    transpose = g.nodes.Producer(t);
    if (transpose == kNone || !IsTranspose(g.nodes[transpose], {2, 0, 3, 1, 4}) ||
        static_cast<size_t>(g.nodes.ReadCount(t)) != readers || g.nodes.Readers(t).size() != readers) {
      return false;
    }
    r = g.nodes[transpose].proto->input(0);
    return true;
  };
  if (heads && IsOp(g.nodes[n], "Gather") && pr.input_size() == 2) {
    auto index = g.constants.find(pr.input(1));
    const std::vector<int64_t> i = Int64Constant(g, pr.input(1));
    if (IntAttr(pr, "axis", 0) != 0 || index == g.constants.end() || index->second.rank() != 0 || i.size() != 1 ||
        i[0] < 0 || i[0] > 2 || !through_t(pr.input(0), 3)) {
      return false;
    }
    *part = static_cast<int>(i[0]);
  } else if (IsOp(g.nodes[n], "Squeeze") && pr.input_size() >= 1) {
    const std::vector<int64_t> axes = SqueezeAxes(g, pr);
    const Id u = Inner(g, pr.input(0));
    if (heads && axes == std::vector<int64_t>{0} && u != kNone && IsTranspose(g.nodes[u], {2, 0, 3, 1, 4})) {
      own.push_back(u);  // ONNX Runtime's form: Transpose after the Split
      split = SplitOf(g, g.nodes[u].proto->input(0), 2, part);
      if (split == kNone) return false;
      r = g.nodes[split].proto->input(0);
    } else if (heads && axes == std::vector<int64_t>{0}) {  // the export's: Split after the Transpose
      split = SplitOf(g, pr.input(0), 0, part);
      if (split == kNone || !through_t(g.nodes[split].proto->input(0), 1)) return false;
    } else if (!heads && (axes == std::vector<int64_t>{2} || axes == std::vector<int64_t>{-3})) {
      split = SplitOf(g, pr.input(0), 2, part);
      if (split == kNone) return false;
      r = g.nodes[split].proto->input(0);
    } else {
      return false;
    }
  } else {
    return false;
  }
  if (*part < 0) return false;
  const Id reshape = Inner(g, r);
  if (!src->p.empty()) {  // the second and third parts: the source the first found
    if (src->reshape != reshape || src->transpose != transpose || src->split != split) return false;
  } else {
    if (reshape == kNone || !IsOp(g.nodes[reshape], "Reshape") || g.nodes[reshape].opset < 5 ||
        g.nodes[reshape].proto->input_size() != 2 || IntAttr(*g.nodes[reshape].proto, "allowzero", 0) != 0) {
      return false;
    }
    const std::string& p = g.nodes[reshape].proto->input(0);
    std::vector<Id> shapes;
    const std::vector<int64_t> e =
        ShapeWithLeadingDims(g, g.nodes[reshape].proto->input(1), {p, ProjectedInput(g, p)}, &shapes);
    // (Head counts and sizes past the kernel's 2^16 stay unfused: FusedAttentionSpec refuses them.)
    constexpr int64_t kMax = int64_t{1} << 16;
    if (e.size() != 5 || e[0] < -1 || e[1] < -1 || (e[0] == -1 && e[1] == -1) || e[2] != 3 || e[3] < 1 ||
        e[4] < 1 || e[3] > kMax || e[4] > kMax) {
      return false;
    }
    *src = {p, reshape, transpose, split, e[0], e[1], e[3], e[4]};
  }
  nodes->insert(nodes->end(), own.begin(), own.end());
  return true;
}

// `value` is a cache repeated for grouped-query attention, (B, Nkv * G, S, D) from (B, Nkv, S, D):
// Reshape(Expand(Unsqueeze(cache, 2), [1, 1, G, 1, 1]), [0, Nkv * G, -1, D]) (LLaMA's repeat_kv with
// constant shapes; Nkv and D as the past declares them). Query head h reads KV head h / G, the
// kernel's grouping, so the repeated copy is never made.
bool RepeatedCacheOf(const Graph& g, const std::string& value, KeysOrValues* kv, std::vector<Id>* nodes) {
  const Id reshape = Inner(g, value);
  if (reshape == kNone || !IsOp(g.nodes[reshape], "Reshape") || g.nodes[reshape].proto->input_size() != 2 ||
      IntAttr(*g.nodes[reshape].proto, "allowzero", 0) != 0) {
    return false;
  }
  const Id expand = Inner(g, g.nodes[reshape].proto->input(0));
  if (expand == kNone || !IsOp(g.nodes[expand], "Expand") || g.nodes[expand].proto->input_size() != 2) return false;
  const Id unsqueeze = Inner(g, g.nodes[expand].proto->input(0));
  if (unsqueeze == kNone || !IsOp(g.nodes[unsqueeze], "Unsqueeze")) return false;
  const auto& u = *g.nodes[unsqueeze].proto;
  std::vector<int64_t> axes;
  if (u.input_size() == 2) {
    axes = Int64Constant(g, u.input(1));
  } else if (const auto* a = Attr(u, "axes"); a != nullptr) {
    axes.assign(a->ints().begin(), a->ints().end());
  }
  const std::vector<int64_t>* past = CacheShape(g, u.input(0));
  if (axes != std::vector<int64_t>{2} || past == nullptr) return false;
  const int64_t b = (*past)[0], nkv = (*past)[1], d = (*past)[3];
  // The shapes may be constant, or (transformers' export) the batch and sequence read off shapes.
  const std::vector<int64_t> e = ShapeEntries(g, g.nodes[expand].proto->input(1));
  const std::vector<int64_t> shape = ShapeEntries(g, g.nodes[reshape].proto->input(1));
  if (nkv <= 0 || d <= 0 || e.size() != 5 || shape.size() != 4) return false;
  auto one_or = [](int64_t x, int64_t dim) { return x == 1 || (dim > 0 && x == dim); };
  const int64_t group = e[2];
  if (group < 1 || !(one_or(e[0], b) || e[0] == kFromShape) || !one_or(e[1], nkv) ||
      !(e[3] == 1 || e[3] == kFromShape) || !one_or(e[4], d)) {
    return false;
  }
  if (!(shape[0] == 0 || shape[0] == kFromShape || (b > 0 && shape[0] == b)) || shape[1] != nkv * group ||
      !(shape[2] == -1 || shape[2] == kFromShape) || shape[3] != d) {
    return false;
  }
  *kv = {u.input(0), true, group};
  nodes->insert(nodes->end(), {reshape, expand, unsqueeze});
  return true;
}

bool KeysOrValuesOf(const Graph& g, const std::string& value, KeysOrValues* kv, std::vector<Id>* nodes,
                    PackedSource* packed) {
  if (CacheShape(g, value) != nullptr) {
    *kv = {value, true, 1};
    return true;
  }
  *kv = {};
  if (PackedPartOf(g, value, /*heads=*/true, packed, &kv->part, nodes)) {
    kv->x = packed->p;
    return true;
  }
  if (HeadsOf(g, value, &kv->x, nodes)) {
    if (PackedPartOf(g, kv->x, /*heads=*/false, packed, &kv->part, nodes)) kv->x = packed->p;
    return true;
  }
  kv->part = -1;
  if (RepeatedCacheOf(g, value, kv, nodes)) return true;
  // Heads the model computed itself, (B, N, S, D): GPT-NeoX's and Phi's partial rotary rotates Q and
  // K after the split into heads and Concats the rotated part with the rest; read as they are where
  // their declaration or producers prove them 4-D (graph/value_rank.h).
  if (ProvenRank(g, value) != 4) return false;
  *kv = {value, true, 1};
  return true;
}

// `value` is K^T (B, N, D, S): Transpose(k, [0, 2, 3, 1]), or Transpose(keys, [0, 1, 3, 2])
// (PyTorch's k.transpose(-1, -2)) of the heads (Transpose(k, [0, 2, 1, 3])) or of a cache.
bool TransposedKeysOf(const Graph& g, const std::string& value, KeysOrValues* k, std::vector<Id>* nodes,
                      PackedSource* packed) {
  const Id t = Inner(g, value);
  if (t == kNone) return false;
  if (IsTranspose(g.nodes[t], {0, 2, 3, 1})) {
    *k = {g.nodes[t].proto->input(0), false, 1};
    nodes->push_back(t);
    if (PackedPartOf(g, k->x, /*heads=*/false, packed, &k->part, nodes)) k->x = packed->p;
    return true;
  }
  if (!IsTranspose(g.nodes[t], {0, 1, 3, 2})) return false;
  nodes->push_back(t);
  return KeysOrValuesOf(g, g.nodes[t].proto->input(0), k, nodes, packed);
}

// Whether `name` holds float, float16 or bfloat16: a known type, or the type kept by the ops
// between it and one (reshapes, transposes, products with a constant, arithmetic with a constant).
bool IsFloatLikeValue(const Graph& g, const std::string& name, int depth = 0) {
  const DataType known = KnownType(g, name);
  if (known != DataType::kUndefined) return IsFloatLike(known);
  const Id p = g.nodes.Producer(name);
  if (p == kNone || depth > 12) return false;
  const Node& n = g.nodes[p];
  const std::string& op = n.op_type();
  const bool plain = n.domain.empty();
  int operands = 0;
  if (plain && (op == "Reshape" || op == "Transpose" || op == "Softmax" || op == "LayerNormalization" ||
                op == "Identity" || op == "Squeeze" || op == "Unsqueeze" || op == "Flatten")) {
    operands = 1;
  } else if ((plain && (op == "MatMul" || op == "Add" || op == "Sub" || op == "Mul" || op == "Div")) ||
             (n.domain == kFusedDomain && op == internal_ops::kFusedMatMul) ||
             (n.domain == kMsDomain && op == "FusedMatMul")) {
    operands = 2;
  }
  for (int k = 0; k < std::min(operands, n.proto->input_size()); ++k) {
    if (IsFloatLikeValue(g, n.proto->input(k), depth + 1)) return true;
  }
  return false;
}

// Softmax over the last axis of the 4-D scores (from opset 13 its default; before, the 2-D
// coercion at axis 3 is the same).
bool LastAxisSoftmax(const Node& n) {
  if (!IsOp(n, "Softmax") || n.proto->input_size() != 1 || n.proto->output_size() != 1) return false;
  const auto* a = Attr(*n.proto, "axis");
  const int64_t axis = a != nullptr ? a->i() : (n.opset >= 13 ? -1 : 1);
  return axis == -1 || axis == 3;
}

// x = Reshape(Mul(P, c), shape) with c a scalar constant, each read by the pattern alone: HF BART's
// and Whisper's q_proj(x) * scaling before the split into heads. c joins the scale, and a Reshape of
// P takes the old one's place (so MergeQkvProjections finds the product right before it).
struct Prescaled {
  Id mul = kNone, reshape = kNone;
  std::string p;
};

bool PrescaledHeads(const Graph& g, const std::string& x, float* scale, Prescaled* out) {
  const Id reshape = Inner(g, x);
  if (reshape == kNone || !IsOp(g.nodes[reshape], "Reshape") || g.nodes[reshape].proto->input_size() != 2) return false;
  const Id mul = Inner(g, g.nodes[reshape].proto->input(0));
  if (mul == kNone || !IsOp(g.nodes[mul], "Mul") || g.nodes[mul].opset < 7) return false;
  const auto& m = *g.nodes[mul].proto;
  if (m.input_size() != 2 || m.output_size() != 1) return false;
  for (int i = 0; i < 2; ++i) {
    float c = 0.0f;
    if (ScalarConstant(g, m, i, &c) && !g.constants.count(m.input(1 - i))) {
      *scale *= c;
      *out = {mul, reshape, m.input(1 - i)};
      return true;
    }
  }
  return false;
}

// Adds to `nodes` the Shapes in `shapes` and the shape arithmetic after them, when all of it only
// feeds nodes of the pattern (the bmm form's views of the scores, (bsz, N, tgt_len, src_len)):
// replaced with them, nothing reads it after. False when any of it is read elsewhere or is a
// graph output. At most 32 nodes: an export's cone is a Gather, an Unsqueeze and two Concats.
bool AbsorbShapeCones(const Graph& g, const std::vector<Id>& shapes, std::vector<Id>* nodes) {
  std::unordered_set<Id> in(nodes->begin(), nodes->end());
  std::vector<Id> work = shapes;
  int budget = 32;
  while (!work.empty()) {
    const Id n = work.back();
    work.pop_back();
    if (in.count(n)) continue;
    const Node& node = g.nodes[n];
    const bool plumbing = IsOp(node, "Shape") || IsOp(node, "Gather") || IsOp(node, "Unsqueeze") ||
                          IsOp(node, "Squeeze") || IsOp(node, "Concat") || IsOp(node, "Slice") ||
                          IsOp(node, "Cast") || IsOp(node, "Mul");
    if (--budget < 0 || !plumbing || !node.subgraphs.empty()) return false;
    in.insert(n);
    nodes->push_back(n);
    for (const std::string& out : node.proto->output()) {
      const std::vector<Id> readers = g.nodes.Readers(out);
      if (g.nodes.ReadCount(out) != static_cast<int>(readers.size())) return false;  // a graph output
      for (const Id reader : readers) {
        if (!in.count(reader)) work.push_back(reader);
      }
    }
  }
  return true;
}

// Adds Reshape(view.x, [B, N, -1, D]) writing `name`, B a number or Gather(Shape(of), [axis]):
// the bmm form's flattened keys or values as the (B, N, T, D) heads whose rows they are.
void AddFlatView(Rewriter& r, const Node& like, const std::string& name, const FlatView& view,
                 const FlatHeads& flat, Patch* patch) {
  auto node = [&](const char* op, std::vector<std::string> inputs, const std::string& output) {
    auto n = std::make_shared<onnx::NodeProto>();
    n->set_op_type(op);
    n->set_name(output);
    for (const std::string& in : inputs) n->add_input(in);
    n->add_output(output);
    return n;
  };
  const std::string shape = r.FreshName(name + "_shape");
  if (view.batch.of.empty()) {
    patch->constants.push_back(
        {shape, Tensor::FromVector<int64_t>({4}, {view.batch.value, flat.heads, -1, flat.head_size})});
  } else {
    const std::string of = r.FreshName(name + "_of"), index = r.FreshName(name + "_axis");
    const std::string batch = r.FreshName(name + "_batch"), tail = r.FreshName(name + "_tail");
    patch->constants.push_back({index, Tensor::FromVector<int64_t>({1}, {view.batch.axis})});
    patch->constants.push_back({tail, Tensor::FromVector<int64_t>({3}, {flat.heads, -1, flat.head_size})});
    patch->added.push_back(WithProto(like, node("Shape", {view.batch.of}, of)));
    auto gather = node("Gather", {of, index}, batch);
    SetAttribute(*gather, "axis", int64_t{0});
    patch->added.push_back(WithProto(like, std::move(gather)));
    auto concat = node("Concat", {batch, tail}, shape);
    SetAttribute(*concat, "axis", int64_t{0});
    patch->added.push_back(WithProto(like, std::move(concat)));
    for (const std::string* t : {&of, &batch, &shape}) patch->types.push_back({*t, DataType::kInt64});
  }
  patch->added.push_back(WithProto(like, node("Reshape", {view.x, shape}, name)));
  if (const DataType t = KnownType(r.graph(), view.x); t != DataType::kUndefined) patch->types.push_back({name, t});
}

}  // namespace

std::optional<Patch> FuseAttention(Rewriter& r, Id index) {
  const Graph& g = r.graph();
  const Node& pv = r[index];
  if (!IsOp(pv, "MatMul") || pv.proto->input_size() != 2 || pv.proto->output_size() != 1) return std::nullopt;
  std::vector<Id> nodes;  // every node of the pattern
  nodes.push_back(index);
  KeysOrValues v;
  PackedSource packed;  // q, k and v of one packed projection, when they are
  FlatHeads flat;       // the bmm form (heads > 0): q, k and v flattened to (B * N, S, D)
  // The bmm form's Shapes of flattened values (an export's src_len = key_states.size(1)), removed
  // with the plumbing after them when that only feeds the pattern's Reshapes (AbsorbShapeCones).
  std::vector<Id> shape_readers;
  // Flattened K or V of a cache or past input, read through a 4-D view of the same bytes: the
  // view's name (kernel input) and entries.
  std::vector<std::pair<std::string, FlatView>> views;
  std::string values = pv.proto->input(1);
  FlatView view;
  if (FlatHeadsOf(g, &values, &flat, &nodes, &shape_readers)) {
    // h = Transpose(Reshape(p, [B, S, N, D])) is proven (B, N, S, D): read in place when it is
    // also read elsewhere (a decoder's present output).
    if (!KeysOrValuesOf(g, values, &v, &nodes, &packed) || v.part >= 0) return std::nullopt;
  } else if (FlatViewOf(g, values, &flat, &view, &nodes, &shape_readers)) {
    v = {r.FreshName(view.x + "_heads"), true, 1};
    views.push_back({v.x, view});
  } else if (!KeysOrValuesOf(g, values, &v, &nodes, &packed)) {
    return std::nullopt;
  }
  const size_t v_nodes_end = nodes.size();  // V's own nodes: nodes[1, v_nodes_end)
  const Id softmax = Inner(g, pv.proto->input(0));
  if (softmax == kNone || !LastAxisSoftmax(r[softmax])) return std::nullopt;
  nodes.push_back(softmax);

  // Softmax's input: [Add(scores, term)]..., the scores [scaled], the product Q K^T. Each Add adds
  // one term: a mask, or T5's and Swin's per-head position bias before it; the kernel adds their sum.
  std::string logits = r[softmax].proto->input(0);
  // The bmm form adds its mask to the scores Reshaped to (B, N, S, T), then flattens them back.
  bool flat_detour = false;
  std::vector<Dim> back_tail, up_tail;  // the detour's (S, T) entries, checked once S and T are known
  if (const Id back = Inner(g, logits); flat.heads > 0 && back != kNone) {
    std::vector<Dim> e;
    if (ReshapeTo(g, r[back], &e) && e.size() == 3 && e[0] == flat.rows) {
      flat_detour = true;
      back_tail = {e[1], e[2]};
      logits = r[back].proto->input(0);
      nodes.push_back(back);
    }
  }
  std::vector<std::string> terms;
  std::vector<Id> term_adds;
  constexpr int kMaxTerms = 4;
  for (Id add = Inner(g, logits); add != kNone && IsOp(r[add], "Add") && terms.size() < kMaxTerms;
       add = Inner(g, logits)) {
    const auto& a = *r[add].proto;
    if (r[add].opset < 7 || a.input_size() != 2 || a.output_size() != 1 || a.input(0) == a.input(1)) {
      return std::nullopt;
    }
    // The scores are the operand a product or its scaling writes for this Add alone, or else an Add
    // before it (a term computed in the layer, Add(m1, m2), is then never taken for the scores).
    int side = -1;
    for (const bool chained : {false, true}) {
      for (int s = 0; s < 2 && side < 0; ++s) {
        const Id p = Inner(g, a.input(s));
        if (p == kNone) continue;
        const Node& n = r[p];
        // (In the bmm form, the scores are those Reshaped to (B, N, S, T).)
        const bool scores = flat_detour ? UnflattensHeads(g, n, flat, &up_tail)
                                        : IsOp(n, "MatMul") || IsOp(n, "Div") || IsOp(n, "Mul") || IsOp(n, "Where") ||
                                              IsMs(n, "FusedMatMul");
        if (chained ? IsOp(n, "Add") : scores) side = s;
      }
    }
    if (side < 0) return std::nullopt;
    const std::string& term = a.input(1 - side);
    // A constant mask of rank > 4 would raise the scores' rank (and move Softmax's axis).
    if (auto c = g.constants.find(term); c != g.constants.end() && c->second.rank() > 4) return std::nullopt;
    terms.push_back(term);
    term_adds.push_back(add);
    logits = a.input(side);
    nodes.push_back(add);
  }
  // GPT-2's causal mask as transformers writes it, on the scaled scores before the padding mask:
  // Where(causal, scores, lowest); or masked_fill as DistilBERT writes its padding mask:
  // Where(mask == 0, lowest, scores). It becomes the additive Where(causal, 0, lowest) (or
  // Where(hidden, lowest, 0)) the kernel adds: scores + lowest rounds to lowest in float for any
  // score below 1e30, so both give the same probabilities (a -inf would make a row of nothing
  // visible NaN instead of the kernel's 0).
  Id where = kNone;
  int where_scores = 0;  // the Where's input holding the scores, 1 or 2
  if (const Id w = Inner(g, logits); w != kNone && IsOp(r[w], "Where") && r[w].proto->input_size() == 3) {
    for (const int at : {1, 2}) {
      float lowest = 0.0f;
      if (where == kNone && ScalarConstant(g, *r[w].proto, 3 - at, &lowest) && std::isfinite(lowest) &&
          lowest <= -1e30f) {
        where = w;
        where_scores = at;
      }
    }
    if (where != kNone) {
      logits = r[w].proto->input(where_scores);
      nodes.push_back(w);
    }
  }
  if (flat_detour) {
    const Id up = Inner(g, logits);
    if (up == kNone || !UnflattensHeads(g, r[up], flat, &up_tail)) return std::nullopt;
    logits = r[up].proto->input(0);
    nodes.push_back(up);
  } else if (flat.heads > 0 && (!terms.empty() || where != kNone)) {
    return std::nullopt;  // a term of the flattened scores' shape is not the kernel's (B, N, S, T)
  }
  float scale = 1.0f;
  PeelScales(g, &logits, &scale, &nodes);
  const Id qk = Inner(g, logits);
  if (qk == kNone) return std::nullopt;
  const Node& product = r[qk];
  const auto& pq = *product.proto;
  if (pq.input_size() != 2 || pq.output_size() != 1) return std::nullopt;
  bool k_transposed = false;  // B holds K (B, N, S, D), not K^T
  if (IsMs(product, "FusedMatMul")) {
    if (IntAttr(pq, "transA", 0) != 0 || IntAttr(pq, "transBatchA", 0) != 0 || IntAttr(pq, "transBatchB", 0) != 0) {
      return std::nullopt;
    }
    const auto* alpha = Attr(pq, "alpha");
    scale *= alpha != nullptr ? alpha->f() : 1.0f;
    k_transposed = IntAttr(pq, "transB", 0) != 0;
  } else if (!IsOp(product, "MatMul")) {
    return std::nullopt;
  }
  nodes.push_back(qk);
  std::string q_heads = pq.input(0), kt = pq.input(1), q;
  PeelScales(g, &q_heads, &scale, &nodes);
  PeelScales(g, &kt, &scale, &nodes);
  if (flat.heads > 0) {  // K^T = Transpose(K, [0, 2, 1]) of flattened heads (or FusedMatMul's transB)
    if (!k_transposed) {
      const Id t = Inner(g, kt);
      if (t == kNone || !IsTranspose(r[t], {0, 2, 1})) return std::nullopt;
      nodes.push_back(t);
      kt = r[t].proto->input(0);
      PeelScales(g, &kt, &scale, &nodes);
    }
    FlatHeads fq, fk = flat;
    const bool k_view = !FlatHeadsOf(g, &kt, &fk, &nodes, &shape_readers);
    if (k_view && !FlatViewOf(g, kt, &fk, &view, &nodes, &shape_readers)) return std::nullopt;
    if (!FlatHeadsOf(g, &q_heads, &fq, &nodes, &shape_readers) || !(fk.rows == flat.rows) ||
        !(fq.rows == flat.rows) || fk.heads != flat.heads || fq.heads != flat.heads || fq.head_size != fk.head_size) {
      return std::nullopt;
    }
    if (flat_detour && !(ScoresTail(back_tail, fq.seq, fk.seq) && ScoresTail(up_tail, fq.seq, fk.seq))) {
      return std::nullopt;
    }
    k_transposed = true;  // kt is now K's heads, (B, N, T, D)
    PeelScales(g, &q_heads, &scale, &nodes);
    if (k_view) {
      kt = r.FreshName(view.x + "_heads");
      views.push_back({kt, view});
    } else {
      PeelScales(g, &kt, &scale, &nodes);
    }
  }
  KeysOrValues k;
  if (!views.empty() && views.back().first == kt) {
    k = {kt, true, 1};
  } else if (k_transposed ? !KeysOrValuesOf(g, kt, &k, &nodes, &packed)
                          : !TransposedKeysOf(g, kt, &k, &nodes, &packed)) {
    return std::nullopt;
  }
  // K computed in heads (rotated after the split) and V split by the pattern's Transpose: V is read
  // as that Transpose writes it, (B, N, S, D), the Transpose kept, so both share one layout.
  if (k.bnsd && !v.bnsd && v.part < 0 && packed.p.empty() && v_nodes_end == 2 &&
      ProvenRank(g, pv.proto->input(1)) == 4) {
    nodes.erase(nodes.begin() + 1);
    v = {pv.proto->input(1), true, 1};
  }
  // Otherwise (ONNX Runtime's transpose optimizer moves K's Transpose after a rotary while V is
  // sliced in heads) the one in (B, S, N, D) is put in heads by a Transpose of its own: a copy of
  // K or V, where unfused the scores and probabilities of every head went through separate ops.
  std::string to_heads, in_heads;  // that Transpose's input and output
  if (k.bnsd != v.bnsd && k.repeat == 1 && v.repeat == 1 && k.part < 0 && v.part < 0 && packed.p.empty()) {
    KeysOrValues& split = k.bnsd ? v : k;
    to_heads = split.x;
    in_heads = r.FreshName(split.x + "_heads");
    split = {in_heads, true, 1};
  }
  if (k.bnsd != v.bnsd || k.repeat != v.repeat) return std::nullopt;  // one layout for both
  // A packed projection serves q, k and v in its order, or none of them.
  int q_part = -1;
  bool q_bnsd = false;
  if (!packed.p.empty()) {
    if (!PackedPartOf(g, q_heads, /*heads=*/true, &packed, &q_part, &nodes) &&
        !(HeadsOf(g, q_heads, &q, &nodes) && PackedPartOf(g, q, /*heads=*/false, &packed, &q_part, &nodes))) {
      return std::nullopt;
    }
    if (q_part != 0 || k.part != 1 || v.part != 2) return std::nullopt;
  } else {
    // Q split into heads by the pattern's Transpose; with a cache, also Q already in heads (LLaMA
    // rotates it after the split): the cache's rank 4 makes the scores 4-D whatever Q's rank, and the
    // kernel reads a lower-rank Q as broadcast over the leading dimensions, as MatMul does.
    q_bnsd = !HeadsOf(g, q_heads, &q, &nodes);
  }
  if (q_bnsd && !k.bnsd) return std::nullopt;
  if (q_bnsd) q = q_heads;
  if (q_part == 0) {
    q = packed.p;
    for (const Id shared : {packed.reshape, packed.transpose, packed.split}) {
      if (shared != kNone) nodes.push_back(shared);
    }
  }
  // q_proj(x) * scaling (and the same on k) before the split into heads: the scaling joins the scale.
  std::vector<Prescaled> prescaled;
  for (const auto& [x, split] : {std::pair{&q, !q_bnsd && q_part < 0}, std::pair{&k.x, !k.bnsd && k.part < 0}}) {
    Prescaled pre;
    if (split && PrescaledHeads(g, *x, &scale, &pre)) {
      prescaled.push_back(pre);
      nodes.insert(nodes.end(), {pre.mul, pre.reshape});
    }
  }
  // The kernel computes in float: the pattern must hold float, float16 or bfloat16.
  if (!IsFloatLikeValue(g, q) && !IsFloatLikeValue(g, k.x) && !IsFloatLikeValue(g, v.x)) return std::nullopt;

  // After the product with V: the Transpose back to (B, S, N, Dv), when the pattern's is its one reader.
  FusedAttentionSpec spec;
  spec.scale = scale;
  spec.kv_bnsd = k.bnsd;
  spec.q_bnsd = q_bnsd;
  spec.kv_repeat = k.repeat;
  if (q_part == 0) {
    spec.packed_heads = packed.heads;
    spec.packed_head_size = spec.packed_v_head_size = packed.head_size;
    spec.packed_batch = packed.batch;
    spec.packed_seq = packed.seq;
  }
  std::string output = pv.proto->output(0);
  Id last = index;
  if (flat.heads > 0) {  // the context (B * N, S, Dv) back to (B, N, S, Dv)
    const Id up = SoleReader(g, output);
    std::vector<Dim> tail;
    if (up == kNone || !UnflattensHeads(g, r[up], flat, &tail) || !tail[1].Is(flat.head_size)) return std::nullopt;
    last = up;
    output = r[up].proto->output(0);
    nodes.push_back(up);
  }
  const Id back = SoleReader(g, output);
  spec.output_bsnd = back != kNone && IsTranspose(r[back], {0, 2, 1, 3});
  if (spec.output_bsnd) {
    last = back;
    output = r[back].proto->output(0);
    nodes.push_back(back);
  }

  if (!shape_readers.empty() && !AbsorbShapeCones(g, shape_readers, &nodes)) return std::nullopt;

  Patch patch{nodes, {}, {}};
  for (const auto& [name, fv] : views) AddFlatView(r, pv, name, fv, flat, &patch);
  if (!to_heads.empty()) {
    auto transpose = std::make_shared<onnx::NodeProto>();
    transpose->set_op_type("Transpose");
    transpose->set_name(in_heads);
    transpose->add_input(to_heads);
    transpose->add_output(in_heads);
    SetAttribute(*transpose, "perm", std::vector<int64_t>{0, 2, 1, 3});
    patch.added.push_back(WithProto(pv, std::move(transpose)));  // pv: a plain MatMul of the model's opset
    if (const DataType t = KnownType(g, to_heads); t != DataType::kUndefined) patch.types.push_back({in_heads, t});
  }
  for (const Prescaled& pre : prescaled) {  // Reshape(P) in place of Reshape(Mul(P, c))
    auto reshape = std::make_shared<onnx::NodeProto>(*r[pre.reshape].proto);
    reshape->set_input(0, pre.p);
    patch.added.push_back(WithProto(r[pre.reshape], std::move(reshape)));
  }
  if (where != kNone) {
    const auto& w = *r[where].proto;
    const std::string zero = r.FreshName(w.output(0) + "_zero"), additive = r.FreshName(w.output(0) + "_additive");
    patch.constants.push_back({zero, Tensor::Scalar<float>(0.0f)});
    auto causal = std::make_shared<onnx::NodeProto>();
    causal->set_op_type("Where");
    causal->set_name(w.name());
    causal->add_input(w.input(0));
    causal->add_input(where_scores == 1 ? zero : w.input(1));
    causal->add_input(where_scores == 2 ? zero : w.input(2));
    causal->add_output(additive);
    patch.added.push_back(WithProto(r[where], std::move(causal)));
    patch.types.push_back({additive, DataType::kFloat});
    terms.push_back(additive);
    term_adds.push_back(where);
  }
  // Several terms: their sum, (1, N, S, T) or so, once per layer, in the order the model adds them.
  std::string mask = terms.empty() ? std::string() : terms.back();
  for (int i = static_cast<int>(terms.size()) - 2; i >= 0; --i) {
    const std::string both = r.FreshName(terms[i] + "_terms");
    auto sum = std::make_shared<onnx::NodeProto>();
    sum->set_op_type("Add");
    sum->set_name(r[term_adds[i]].proto->name());
    sum->add_input(mask);
    sum->add_input(terms[i]);
    sum->add_output(both);
    patch.added.push_back(WithProto(r[term_adds[i]], std::move(sum)));
    patch.types.push_back({both, DataType::kFloat});
    mask = both;
  }
  auto fused = std::make_shared<onnx::NodeProto>();
  fused->set_name(r[last].proto->name());
  if (q_part == 0) {  // the packed projection alone
    for (const std::string& in : {q, std::string(), std::string()}) fused->add_input(in);
  } else {
    for (const std::string* in : {&q, &k.x, &v.x}) fused->add_input(*in);
  }
  if (!mask.empty()) fused->add_input(mask);
  fused->add_output(output);
  spec.WriteTo(*fused);
  patch.added.push_back(InternalNode(r[last], std::move(fused), internal_ops::kFusedAttention));
  return patch;
}

}  // namespace onnxflow::graph
