#include "graph/blocked_half.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <string>
#include <vector>

#include "graph/fusion_util.h"
#include "graph/rewrite.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"

namespace onnxflow::graph {
namespace {

// How a node reads and writes float16 values.
struct HalfIo {
  std::vector<int> tied_inputs, tied_outputs;  // one type for all of these
  std::vector<int> free_inputs;                // read in either type
  bool writes_type = false;                    // chooses its tied outputs' type (output_type)
  bool type_follows_input = false;             // without output_type, its outputs take input 0's type
};

// BlockedConv: X and X_SCALE in either type (not a stem's X, which reads the plain image); Y, Z and
// INTO tied, their type its output_type.
HalfIo ConvIo(const Graph& g, const Node& n) {
  HalfIo io{{3, 4}, {0}, {}, true};
  const Tensor* w = WeightConstant(g, *n.proto, 1);
  const bool stem = w == nullptr || w->rank() != 4 || w->dim(1) * IntAttr(*n.proto, "group", 1) < kChannelBlock;
  if (!stem) io.free_inputs = {0, 5};
  return io;
}

// What `n` does with float16 values; a node not described here reads and writes float only.
HalfIo IoOf(const Graph& g, const Node& n) {
  const auto& p = *n.proto;
  if (IsInternal(n, internal_ops::kBlockedConv)) return ConvIo(g, n);
  // BlockedDepthwiseConv: X in either type, Y of its output_type (it has no residual input).
  if (IsInternal(n, internal_ops::kBlockedDepthwiseConv)) return {{}, {0}, {0}, true};
  // The pools, Resize and BatchNormalization (whose PRelu slopes, input 5, are float constants).
  for (const char* op : {internal_ops::kBlockedMaxPool, internal_ops::kBlockedAveragePool,
                         internal_ops::kBlockedGlobalMaxPool, internal_ops::kBlockedGlobalAveragePool,
                         internal_ops::kBlockedResize, internal_ops::kBlockedBatchNormalization}) {
    if (IsInternal(n, op)) return {{0}, {0}, {}, false};  // Y has X's type
  }
  // FromBlocked reads either type and writes the type it is told (output_type).
  if (IsInternal(n, internal_ops::kFromBlocked)) return {{}, {0}, {0}, true};
  // A transformer's: FusedMatMul reads A in either type (B is read as float where it is not a
  // weight); AddLayerNormalization reads both operands in either type and writes its output in the
  // type it is told, its sum (output 3, the residual stream) in float. Both widen a block or a row
  // at a time.
  if (IsInternal(n, internal_ops::kFusedMatMul)) return {{}, {0}, {0}, true, true};
  if (IsInternal(n, internal_ops::kAddLayerNormalization)) return {{}, {0}, {0, 1}, true, true};
  // FusedAttention reads q, k and v in either type, widening one head at a time.
  if (IsInternal(n, internal_ops::kFusedAttention)) return {{}, {0}, {0, 1, 2}, true, true};
  // The readers that read only the shape, or convert.
  if (IsInternal(n, internal_ops::kBlockedShape) || IsOp(n, "Shape") || IsOp(n, "Cast")) return {{}, {}, {0}, false};
  // Plain ops that only move elements (their other inputs are shapes, axes, indices).
  for (const char* op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice"}) {
    if (IsOp(n, op)) return {{0}, {0}, {}, false};
  }
  // Ops of any type that only move elements, or compute on them in float (their 16-bit kernels
  // widen blocks of elements): output and inputs of one type.
  if (IsOp(n, "Concat")) {
    HalfIo io{{}, {0}, {}, false};
    io.tied_inputs.resize(static_cast<size_t>(p.input_size()));
    std::iota(io.tied_inputs.begin(), io.tied_inputs.end(), 0);
    return io;
  }
  if (IsOp(n, "Split")) {
    HalfIo io{{0}, {}, {}, false};
    io.tied_outputs.resize(static_cast<size_t>(p.output_size()));
    std::iota(io.tied_outputs.begin(), io.tied_outputs.end(), 0);
    return io;
  }
  if (IsOp(n, "Identity") || IsOp(n, "Dropout")) return {{0}, {0}, {}, false};
  if ((IsOp(n, "Add") || IsOp(n, "Sub") || IsOp(n, "Mul")) && n.opset >= 7 && p.input_size() == 2) {
    return {{0, 1}, {0}, {}, false};
  }
  return {};
}

// Union-find over the candidate values.
class Classes {
 public:
  int Add(const std::string& v) {
    auto [it, fresh] = index_.emplace(v, static_cast<int>(parent_.size()));
    if (fresh) {
      parent_.push_back(it->second);
      bad_.push_back(false);
      gain_.push_back(0);
    }
    return it->second;
  }
  bool Has(const std::string& v) const { return index_.count(v) != 0; }
  int Find(int i) {
    while (parent_[i] != i) i = parent_[i] = parent_[parent_[i]];
    return i;
  }
  void Join(int a, int b) {
    a = Find(a);
    b = Find(b);
    if (a == b) return;
    parent_[b] = a;
    bad_[a] = bad_[a] || bad_[b];
    gain_[a] += gain_[b];
  }
  void MarkFloat(const std::string& v) {
    if (Has(v)) bad_[Find(index_.at(v))] = true;
  }
  bool Half(const std::string& v) { return Has(v) && !bad_[Find(index_.at(v))] && gain_[Find(index_.at(v))] > 0; }
  // A value of the class that holds storage of its own (+1), or a Cast to float that a reader
  // needs (-1): float16 pays where the first outnumber the second.
  void Count(const std::string& v, int gain) {
    if (Has(v)) gain_[Find(index_.at(v))] += gain;
  }
  const std::map<std::string, int>& values() const { return index_; }

 private:
  std::map<std::string, int> index_;
  std::vector<int> parent_;
  std::vector<bool> bad_;
  std::vector<int> gain_;
};

// Ops whose output is storage of its own, not a view of their input.
bool OwnsOutput(const Node& n) {
  if (n.domain == kOnnxflowDomain) return true;  // the blocked kernels, FromBlocked
  for (const char* op : {"Concat", "Transpose", "Slice", "Add", "Sub", "Mul"}) {
    if (IsOp(n, op)) return true;
  }
  return false;
}

Status Store(Graph* g, int opset) {
  Classes classes;
  for (const std::string& v : g->declared_half) {
    if (KnownType(*g, v) == DataType::kFloat && g->nodes.Producer(v) != NodeGraph::None()) classes.Add(v);
  }
  if (classes.values().empty()) return Status::Ok();

  std::vector<std::pair<NodeGraph::Id, HalfIo>> writers;  // nodes whose output_type is chosen here
  std::map<std::string, std::vector<NodeGraph::Id>> widened_for;  // reads that need a float copy
  for (NodeGraph::Id id : g->nodes.Order()) {
    const Node& n = g->nodes[id];
    const auto& p = *n.proto;
    const HalfIo io = n.subgraphs.empty() ? IoOf(*g, n) : HalfIo{};
    // Tied values: one class, or float all when one of them cannot be float16.
    std::vector<std::string> tied;
    for (int k : io.tied_inputs) {
      if (k < p.input_size() && !p.input(k).empty()) tied.push_back(p.input(k));
    }
    for (int k : io.tied_outputs) {
      if (k < p.output_size() && !p.output(k).empty()) tied.push_back(p.output(k));
    }
    bool all_candidates = true;
    for (const std::string& v : tied) all_candidates = all_candidates && classes.Has(v);
    for (const std::string& v : tied) {
      if (!all_candidates) classes.MarkFloat(v);
      if (all_candidates && v != tied.front()) classes.Join(classes.Add(tied.front()), classes.Add(v));
    }
    if (io.writes_type && !tied.empty()) writers.emplace_back(id, io);
    // Any other read of a candidate reads a float copy (a Cast after its producer); any other
    // write, or a read by a subgraph, keeps it float.
    for (int k = 0; k < p.input_size(); ++k) {
      const bool handled = std::count(io.tied_inputs.begin(), io.tied_inputs.end(), k) ||
                           std::count(io.free_inputs.begin(), io.free_inputs.end(), k);
      if (handled || !classes.Has(p.input(k))) continue;
      if (n.subgraphs.empty() && opset >= 6) {
        widened_for[p.input(k)].push_back(id);
      } else {
        classes.MarkFloat(p.input(k));
      }
    }
    for (int k = 0; k < p.output_size(); ++k) {
      if (!std::count(io.tied_outputs.begin(), io.tied_outputs.end(), k)) classes.MarkFloat(p.output(k));
    }
    for (const std::string& v : n.implicit_inputs) classes.MarkFloat(v);
  }
  // Values that leave the graph keep their float. (Every class left has a writer that chooses:
  // each value has a producer, and a producer not described above made its outputs float.)
  for (const ValueInfo& out : g->outputs) classes.MarkFloat(out.name);
  for (const auto& [v, index] : classes.values()) {
    if (OwnsOutput(g->nodes[g->nodes.Producer(v)])) classes.Count(v, +1);
  }
  for (const auto& [v, readers] : widened_for) classes.Count(v, -1);

  // The writers with their output_type, the readers reading the float copies, then the Casts.
  std::map<NodeGraph::Id, std::shared_ptr<onnx::NodeProto>> edited;
  auto edit = [&](NodeGraph::Id id) -> onnx::NodeProto* {
    auto& proto = edited[id];
    if (proto == nullptr) proto = std::make_shared<onnx::NodeProto>(*g->nodes[id].proto);
    return proto.get();
  };
  for (const auto& [id, io] : writers) {
    const auto& p = *g->nodes[id].proto;
    if (classes.Half(p.output(0))) {
      SetIntAttr(edit(id), "output_type", static_cast<int64_t>(DataType::kFloat16));
      continue;
    }
    // A float output of a node reading float16, whose output would otherwise take that type.
    const bool reads_half = std::any_of(io.free_inputs.begin(), io.free_inputs.end(),
                                        [&](int k) { return k < p.input_size() && classes.Half(p.input(k)); });
    if (io.type_follows_input && reads_half) {
      SetIntAttr(edit(id), "output_type", static_cast<int64_t>(DataType::kFloat));
    }
  }
  NameSet names(*g);
  std::vector<std::pair<Node, NodeGraph::Id>> casts;
  for (const auto& [v, readers] : widened_for) {
    if (!classes.Half(v)) continue;
    const std::string copy = names.Fresh(v + "/float");
    casts.emplace_back(CastNode(v, copy, DataType::kFloat, opset), g->nodes.Producer(v));
    for (NodeGraph::Id r : readers) {
      for (auto& in : *edit(r)->mutable_input()) {
        if (in == v) in = copy;
      }
    }
  }
  if (edited.empty()) return Status::Ok();
  Patch patch;
  for (auto& [id, proto] : edited) {
    patch.replaced.push_back(id);
    patch.AddAt(WithProto(g->nodes[id], std::move(proto)), id);
  }
  for (auto& [cast, at] : casts) {
    patch.types.emplace_back(cast.proto->output(0), DataType::kFloat);
    patch.AddAt(std::move(cast), at);
  }
  std::vector<std::string> half;
  for (const auto& [v, index] : classes.values()) {
    if (classes.Half(v)) half.push_back(v);
  }
  ONNXFLOW_RETURN_IF_ERROR(ApplyPatch(g, std::move(patch), "StoreBlockedValuesInHalf"));
  ONNXFLOW_RETURN_IF_ERROR(CheckAcyclic(*g, "StoreBlockedValuesInHalf"));
  for (const std::string& v : half) g->known_types[v] = DataType::kFloat16;
  return Status::Ok();
}

}  // namespace

Status StoreBlockedValuesInHalf(Graph* graph, int onnx_opset) {
  for (const Node& node : graph->nodes) {
    for (const auto& [name, sub] : node.subgraphs) {
      ONNXFLOW_RETURN_IF_ERROR(StoreBlockedValuesInHalf(sub.get(), onnx_opset));
    }
  }
  return Store(graph, onnx_opset);
}

}  // namespace onnxflow::graph
