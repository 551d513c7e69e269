#include "graph/half_compute.h"

#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "graph/rewrite.h"
#include "ops/cast/cast_elements.h"
#include "ops/framework/domains.h"

namespace onnxflow::graph {
namespace {

bool IsHalf(DataType t) { return t == DataType::kFloat16 || t == DataType::kBFloat16; }

// Whether `value` is read, and every read of it is input 1 of a node `reader_ok` accepts (a
// product's weight).
template <typename ReaderOk>
bool ReadOnlyAsInput1(const Graph& g, const std::string& value, ReaderOk reader_ok) {
  std::unordered_set<Id> seen;  // Readers lists a node once per read
  int reads = 0;
  for (Id r : g.nodes.Readers(value)) {
    if (!seen.insert(r).second) continue;
    const Node& reader = g.nodes[r];
    const bool ok = reader_ok(reader);
    for (int k = 0; k < reader.proto->input_size(); ++k) {
      if (reader.proto->input(k) != value) continue;
      if (!ok || k != 1) return false;
      ++reads;
    }
  }
  return reads > 0 && reads == g.nodes.ReadCount(value);
}

// Whether `reader` keeps a 16-bit constant of rank `rank` in 16 bits as its weight (input 1) and
// widens it as it runs: Conv's W (rank 3 or more), Gemm's and MatMul's B (rank 2)
// (ops/math/constant_b.h, ops/blocked/blocked_conv.cc).
bool WidensHalfWeight(const Node& reader, int64_t rank) {
  if (!reader.domain.empty()) return false;
  return (reader.op_type() == "Conv" && rank >= 3) ||
         ((reader.op_type() == "Gemm" || reader.op_type() == "MatMul") && rank == 2);
}

// Ops whose float kernel computes what their 16-bit form does, to float's precision: only the
// element type of their 16-bit inputs and outputs changes (Cast's `to` is rewritten below). Left
// out: ops whose output type an attribute names (EyeLike, Random*Like, DequantizeLinear-23), and
// attention with a key-value cache, whose cache would be cast in full at every step. The recurrent
// ops are in: in float their weights are widened and packed once at load (ops/rnn/packed_rows.h),
// where in 16 bits every run widened them element by element and multiplied them unpacked (a
// float16 LSTM step of hidden 128: 2.1 ms, against 0.008 ms in float), and ONNX Runtime, whose CPU
// LSTM is float only, casts around them too.
bool RunsInFloat(const Node& n) {
  static const std::unordered_set<std::string> kOnnx = {
      "Abs", "Acos", "Acosh", "Add", "ArgMax", "ArgMin", "Asin", "Asinh", "Atan", "Atanh", "AveragePool",
      "BatchNormalization", "Cast", "CastLike", "Ceil", "Celu", "Clip", "Concat", "Conv", "ConvTranspose", "Cos",
      "Cosh", "CumSum", "DepthToSpace", "Div", "Einsum", "Elu", "Equal", "Erf", "Exp", "Expand", "Flatten", "Floor",
      "Gather", "GatherElements", "GatherND", "Gelu", "Gemm", "GlobalAveragePool", "GlobalMaxPool", "Greater", "GRU",
      "GreaterOrEqual", "GroupNormalization", "HardSigmoid", "HardSwish", "Identity", "InstanceNormalization",
      "IsInf", "IsNaN", "LayerNormalization", "LeakyRelu", "Less", "LessOrEqual", "Log", "LogSoftmax", "LRN", "LSTM",
      "MatMul", "Max", "MaxPool", "Mean", "Min", "Mish", "Mul", "Neg", "Pad", "Pow", "PRelu", "Reciprocal",
      "ReduceL1", "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceMax", "ReduceMean", "ReduceMin",
      "ReduceProd", "ReduceSum", "ReduceSumSquare", "Relu", "Reshape", "Resize", "RNN", "Round", "Selu", "Shape",
      "Sigmoid", "Sign", "Sin", "Sinh", "Size", "Slice", "Softmax", "Softplus", "Softsign", "SpaceToDepth",
      "Split", "Sqrt", "Squeeze", "Sub", "Sum", "Tan", "Tanh", "ThresholdedRelu", "Tile", "TopK", "Transpose",
      "Trilu", "Unsqueeze", "Where",
      // ONNX Runtime's, registered in the default domain (a genai float16 LLM's every layer has one)
      "SimplifiedLayerNormalization"};
  static const std::unordered_set<std::string> kMicrosoft = {
      "BiasAdd", "BiasGelu", "BiasSoftmax", "DynamicQuantizeMatMul", "FastGelu", "FusedConv", "FusedGemm",
      "FusedMatMul", "Gelu", "LayerNormalization", "MatMulBnb4", "MatMulIntegerToFloat", "MatMulNBits", "QuickGelu",
      "SimplifiedLayerNormalization", "SkipLayerNormalization", "SkipSimplifiedLayerNormalization",
      "TransposeMatMul"};
  if (!n.subgraphs.empty()) return false;
  if (n.domain.empty()) return kOnnx.count(n.op_type()) > 0;
  return n.domain == kMsDomain && kMicrosoft.count(n.op_type()) > 0;
}

class HalfRegion {
 public:
  HalfRegion(Graph* g, int opset, NameSet* names) : g_(g), opset_(opset), names_(names) {
    for (const ValueInfo& i : g->inputs) inputs_.insert(i.name);
    for (const ValueInfo& o : g->outputs) outputs_.insert(o.name);
  }

  // One patch for the region: which nodes run in float depends on the whole graph, and the graph
  // is only valid again once every reader of a widened value reads its twin.
  Status Rewrite() {
    const std::vector<Id> order = g_->nodes.Order();
    std::unordered_set<Id> in_float;
    for (Id id : order) {
      if (Converts(g_->nodes[id])) in_float.insert(id);
    }
    if (in_float.empty()) return Status::Ok();

    // Whether anything outside the float region reads a value in 16 bits.
    std::unordered_set<std::string> read_in_half;
    for (Id id : order) {
      if (in_float.count(id)) continue;
      const Node& n = g_->nodes[id];
      for (const auto& in : n.proto->input()) read_in_half.insert(in);
      for (const auto& in : n.implicit_inputs) read_in_half.insert(in);
    }
    for (const ValueInfo& out : g_->outputs) read_in_half.insert(out.name);

    // The converted nodes, and Casts after a node (at its place) or before them all.
    std::vector<std::string> released;
    auto twin = [&](const std::string& value) -> const std::string& {
      auto it = twins_.find(value);
      if (it != twins_.end()) return it->second;
      const std::string name = names_->Fresh(value + "/float");
      patch_.types.emplace_back(name, DataType::kFloat);
      if (KnownType(*g_, value) == DataType::kFloat16) g_->declared_half.insert(name);
      const Id from = g_->nodes.Producer(value);
      if (from != kNone && in_float.count(from)) {
        // Computed in float: rounded to 16 bits only for those who read it so.
        if (read_in_half.count(value)) patch_.AddAt(CastNode(name, value, KnownType(*g_, value), opset_), from);
      } else if (auto c = g_->constants.find(value); c != g_->constants.end()) {
        auto widened = CastTensor(c->second, DataType::kFloat);
        if (!read_in_half.count(value)) released.push_back(value);
        patch_.constants.emplace_back(name, std::move(widened).value());
      } else {
        // A graph input, or a 16-bit value of a node outside the region: widened once, after
        // its producer.
        patch_.AddAt(CastNode(value, name, DataType::kFloat, opset_), from);
      }
      return twins_.emplace(value, name).first->second;
    };

    const std::unordered_set<std::string> kept = HalfWeights(order, in_float);
    for (Id id : order) {
      if (!in_float.count(id)) continue;
      const Node& n = g_->nodes[id];
      auto proto = std::make_shared<onnx::NodeProto>(*n.proto);
      if (n.domain.empty() && n.op_type() == "Clip") BoundClip(proto.get());
      for (auto& in : *proto->mutable_input()) {
        if (!in.empty() && IsHalf(KnownType(*g_, in)) && !kept.count(in)) in = twin(in);
      }
      // Its place comes before the Casts of its outputs, which twin() puts at its id.
      const size_t slot = patch_.added.size();
      patch_.AddAt(Node{}, id);
      for (auto& out : *proto->mutable_output()) {
        if (!out.empty() && IsHalf(KnownType(*g_, out))) out = twin(out);
      }
      if (n.domain.empty() && n.op_type() == "Cast") {
        const onnx::AttributeProto* to = Attr(*proto, "to");
        if (to != nullptr && IsHalf(static_cast<DataType>(to->i()))) SetIntAttr(proto.get(), "to", onnx::TensorProto::FLOAT);
      }
      patch_.replaced.push_back(id);
      patch_.added[slot] = WithProto(n, std::move(proto));
    }
    ONNXFLOW_RETURN_IF_ERROR(ApplyPatch(g_, std::move(patch_), "ComputeHalfInFloat"));
    ONNXFLOW_RETURN_IF_ERROR(CheckAcyclic(*g_, "ComputeHalfInFloat"));
    // A 16-bit original goes now when nothing else reads it: the load's peak is here.
    for (const std::string& name : released) g_->constants[name] = Tensor();
    return Status::Ok();
  }

 private:
  // A 16-bit Clip without a bound clips at its type's largest finite value (numeric_limits::max,
  // the spec's default; ONNX Runtime's float16 Clip gives 65504 for +inf). Run in float, the
  // missing bound would be float's and the narrowed result inf: the bound is written out instead,
  // as an input from opset 11 on, else as the min / max attribute.
  void BoundClip(onnx::NodeProto* clip) {
    const DataType type = KnownType(*g_, clip->input(0));
    if (!IsHalf(type)) return;
    const float largest = type == DataType::kFloat16 ? 65504.0f : 3.38953139e38f;  // bfloat16's
    if (opset_ < 11) {
      if (Attr(*clip, "min") == nullptr) SetFloatAttr(clip, "min", -largest);
      if (Attr(*clip, "max") == nullptr) SetFloatAttr(clip, "max", largest);
      return;
    }
    while (clip->input_size() < 3) clip->add_input("");
    for (int i : {1, 2}) {
      if (!clip->input(i).empty()) continue;
      const std::string name = names_->Fresh(clip->output(0) + (i == 1 ? "/min" : "/max"));
      patch_.constants.emplace_back(name, Tensor::FromVector<float>({}, {i == 1 ? -largest : largest}));
      clip->set_input(i, name);
    }
  }

  // Whether `n` runs in float: its op does, every value it touches has a known type, and one of
  // them is 16-bit.
  bool Converts(const Node& n) const {
    if (!RunsInFloat(n) || FoldsIntoHalfWeight(n) || AppendsToHalfCache(n) || GathersFromHalfTable(n)) return false;
    bool half = false;
    for (const auto* list : {&n.proto->input(), &n.proto->output()}) {
      for (const auto& name : *list) {
        if (name.empty()) continue;
        const DataType t = KnownType(*g_, name);
        if (t == DataType::kUndefined) return false;
        half |= IsHalf(t);
      }
    }
    if (n.domain.empty() && n.op_type() == "Cast") {
      const onnx::AttributeProto* to = Attr(*n.proto, "to");
      half |= to != nullptr && IsHalf(static_cast<DataType>(to->i()));
    }
    return half;
  }

  // A decoder's Concat(past, new) of a 16-bit cache: a graph input (or an enclosing one, in a
  // merged decoder's branch) extended into a graph output. It only moves elements, so it runs as
  // well in 16 bits; in float it cost a widening Cast of the past, a Concat of twice the bytes
  // and a narrowing Cast of the present at every step, 44% of GPT-2 fp16's step after 1024 tokens
  // (perf). Kept in 16 bits, the new entries are rounded to half before the attention reads them,
  // as the model computes them.
  bool AppendsToHalfCache(const Node& n) const {
    if (!n.domain.empty() || n.op_type() != "Concat" || n.proto->output_size() != 1) return false;
    const std::string& out = n.proto->output(0);
    if (!outputs_.count(out) || !IsHalf(KnownType(*g_, out))) return false;
    for (const auto& in : n.proto->input()) {
      if (inputs_.count(in) || g_->outer_inputs.count(in)) return true;
    }
    return false;
  }

  // A Gather of rows of a big 16-bit constant (an embedding table) runs in 16 bits, and only the
  // rows it picks are widened (by the Cast after it): in float, the whole table was widened at
  // load. A half BERT-base's 30522 x 768 word embeddings are 47 MB in half; an LLM's are hundreds.
  bool GathersFromHalfTable(const Node& n) const {
    if (!n.domain.empty() || n.op_type() != "Gather" || n.proto->input_size() < 1) return false;
    auto table = g_->constants.find(n.proto->input(0));
    return table != g_->constants.end() && IsHalf(table->second.dtype()) && table->second.size() >= kMinHalfTable;
  }
  // Smaller tables are widened with the other constants: no Cast node for a few KB.
  static constexpr int64_t kMinHalfTable = int64_t{1} << 16;

  // A layout op of constants whose 16-bit result only Gemm's B or Conv's W reads: it stays 16-bit,
  // so FoldConstants makes it a 16-bit weight that HalfWeights keeps (real_inception_v1's
  // classifier weights, Reshape [1, 1, 1000, 1024] -> [1000, 1024], were otherwise widened and
  // packed in float: 4 MB of its 59 MB fp16 peak).
  bool FoldsIntoHalfWeight(const Node& n) const {
    static const std::unordered_set<std::string> kLayout = {"Reshape", "Flatten", "Squeeze", "Unsqueeze"};
    if (!n.domain.empty() || kLayout.count(n.op_type()) == 0 || n.proto->output_size() != 1) return false;
    for (const auto& in : n.proto->input()) {
      if (!in.empty() && g_->constants.count(in) == 0) return false;
    }
    return IsHalf(KnownType(*g_, n.proto->output(0))) && ReadOnlyAsWeight(n.proto->output(0));
  }

  // Whether every read of `value` is as input 1 of Gemm or Conv (not a graph output).
  bool ReadOnlyAsWeight(const std::string& value) const {
    return ReadOnlyAsInput1(*g_, value, [](const Node& reader) {
      return reader.domain.empty() && (reader.op_type() == "Gemm" || reader.op_type() == "Conv");
    });
  }

  // The 16-bit constants that float nodes read only as the weights of MatMul or Gemm (their B) or
  // of Conv (its W): those kernels keep them in 16 bits and widen them as the product runs
  // (ops/math/constant_b.h, ops/blocked/blocked_conv.cc), so the model's weight bytes stay halved,
  // and the load never holds a float copy of them all (a CNN's weights are nearly all Conv's).
  // The fusions that fold a scale into Conv's weights keep them 16-bit (graph/fusion.cc).
  std::unordered_set<std::string> HalfWeights(const std::vector<Id>& order, const std::unordered_set<Id>& in_float) const {
    std::unordered_map<std::string, bool> weight_only;
    for (Id id : order) {
      if (!in_float.count(id)) continue;
      const Node& n = g_->nodes[id];
      for (int k = 0; k < n.proto->input_size(); ++k) {
        auto c = g_->constants.find(n.proto->input(k));
        if (c == g_->constants.end() || !IsHalf(c->second.dtype())) continue;
        const bool weight = k == 1 && WidensHalfWeight(n, c->second.rank());
        auto [it, fresh] = weight_only.emplace(c->first, weight);
        if (!fresh) it->second = it->second && weight;
      }
    }
    std::unordered_set<std::string> kept;
    for (const auto& [name, only] : weight_only) {
      if (only) kept.insert(name);
    }
    for (Id id : order) {  // and the weights FoldConstants will make of 16-bit layout ops
      const Node& n = g_->nodes[id];
      if (!in_float.count(id) && RunsInFloat(n) && FoldsIntoHalfWeight(n)) kept.insert(n.proto->output(0));
    }
    return kept;
  }

  Graph* g_;
  int opset_;
  NameSet* names_;
  Patch patch_;
  std::unordered_map<std::string, std::string> twins_;
  std::unordered_set<std::string> inputs_, outputs_;  // the graph's, by name (AppendsToHalfCache)
};

// A Cast to float of a 16-bit constant that products read only as their weights: the products
// read the constant itself, which keeps it in 16 bits like a float16 model's own weights
// (HalfWeights below). ONNX Runtime saves a float16 CNN that way, each weight behind a Cast to
// float (ISNet: 238 of them), and folded, those Casts held every weight in float: peak RSS
// 802 MB against 632 MB for the model as exported.
Status ReadHalfWeightsDirectly(Graph* g) {
  Patch patch;
  std::unordered_set<Id> patched;
  for (Id id : g->nodes.Order()) {
    const Node& n = g->nodes[id];
    if (!n.domain.empty() || n.op_type() != "Cast" || n.proto->input_size() != 1 || n.proto->output_size() != 1) continue;
    const onnx::AttributeProto* to = Attr(*n.proto, "to");
    auto c = g->constants.find(n.proto->input(0));
    const std::string& out = n.proto->output(0);
    if (to == nullptr || to->i() != onnx::TensorProto::FLOAT || c == g->constants.end() || !IsHalf(c->second.dtype()) ||
        g->nodes.IsOutput(out)) {
      continue;
    }
    const int64_t rank = c->second.rank();
    if (!ReadOnlyAsInput1(*g, out, [rank](const Node& reader) { return WidensHalfWeight(reader, rank); })) continue;
    patch.replaced.push_back(id);
    for (Id r : g->nodes.Readers(out)) {
      if (!patched.insert(r).second) continue;
      auto renamed = std::make_shared<onnx::NodeProto>(*g->nodes[r].proto);
      renamed->set_input(1, c->first);
      patch.replaced.push_back(r);
      patch.AddAt(WithProto(g->nodes[r], std::move(renamed)), r);
    }
  }
  if (patch.replaced.empty()) return Status::Ok();
  return ApplyPatch(g, std::move(patch), "ReadHalfWeightsDirectly");
}

Status Rewrite(Graph* g, int opset, NameSet* names) {
  for (const Node& n : g->nodes) {
    for (const auto& [attribute, sub] : n.subgraphs) ONNXFLOW_RETURN_IF_ERROR(Rewrite(sub.get(), opset, names));
  }
  ONNXFLOW_RETURN_IF_ERROR(ReadHalfWeightsDirectly(g));
  // Widened constants replace their 16-bit originals for every reader in float; those nothing
  // reads any more are released with the other unread initializers after the passes.
  return HalfRegion(g, opset, names).Rewrite();
}

}  // namespace

Status ComputeHalfInFloat(Graph* graph, int onnx_opset) {
  // Cast's `to` is an integer from opset 6 on; older graphs keep their 16-bit path.
  if (onnx_opset < 6) return Status::Ok();
  NameSet names(*graph);
  return Rewrite(graph, onnx_opset, &names);
}

}  // namespace onnxflow::graph
