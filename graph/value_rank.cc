#include "graph/value_rank.h"

#include <algorithm>
#include <set>

#include "graph/fusion_util.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"

namespace onnxflow::graph {
namespace {

// ONNX ops whose first output has the rank of their first input (the other inputs are
// parameters that broadcast into it, or a window, or a slope: never of a higher rank).
bool KeepsFirstRank(const std::string& op) {
  static const std::set<std::string> kOps = {
      // elementwise of one operand
      "Abs", "Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "BitwiseNot", "Cast", "CastLike", "Ceil", "Celu",
      "Clip", "Cos", "Cosh", "Elu", "Erf", "Exp", "Floor", "Gelu", "HardSigmoid", "HardSwish", "Identity", "IsInf",
      "IsNaN", "LeakyRelu", "Log", "Mish", "Neg", "Not", "PRelu", "Reciprocal", "Relu", "Round", "Selu", "Shrink",
      "Sigmoid", "Sign", "Sin", "Sinh", "Softplus", "Softsign", "Sqrt", "Tan", "Tanh", "ThresholdedRelu",
      // along an axis, or over windows
      "Softmax", "LogSoftmax", "Hardmax", "CumSum", "LRN", "Conv", "ConvTranspose", "ConvInteger", "QLinearConv",
      "MaxPool", "AveragePool", "LpPool", "GlobalAveragePool", "GlobalMaxPool", "GlobalLpPool",
      "BatchNormalization", "InstanceNormalization", "LayerNormalization", "GroupNormalization",
      "MeanVarianceNormalization", "LpNormalization", "QuantizeLinear", "DequantizeLinear",
      // moving elements without changing the rank
      "Slice", "Pad", "Tile", "Resize", "Upsample", "DepthToSpace", "SpaceToDepth", "ReverseSequence"};
  return kOps.count(op) != 0;
}

// ONNX ops whose output has the rank of their operands' broadcast: the highest of them.
bool Broadcasts(const std::string& op) {
  static const std::set<std::string> kOps = {
      "Add", "Sub", "Mul", "Div", "Pow", "Mod", "Max", "Min", "Sum", "Mean", "Equal", "Greater", "GreaterOrEqual",
      "Less", "LessOrEqual", "And", "Or", "Xor", "BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Where"};
  return kOps.count(op) != 0;
}

// Reductions keep every axis as 1 with keepdims (its default).
bool IsReduction(const std::string& op) {
  return op.rfind("Reduce", 0) == 0 || op == "ArgMax" || op == "ArgMin";
}

}  // namespace

int64_t ValueRanks::Of(const std::string& value) {
  ++query_;
  bool cut = false;
  return Walk(value, depth_, &cut);
}

int64_t ValueRanks::Walk(const std::string& value, int levels, bool* cut) {
  if (auto it = known_.find(value); it != known_.end()) {
    const Answer& a = it->second;
    if (a.levels < 0) return a.rank;
    if (a.query == query_ && a.levels >= levels) {
      *cut = true;
      return a.rank;
    }
  }
  bool short_of_levels = false;
  int64_t rank = Declared(value);
  if (rank < 0) rank = ByProducer(value, levels, &short_of_levels);
  // A proof stands whatever the bound; an unknown that the bound caused may be proven by a walk
  // with more levels left, or by a later query.
  const bool again = rank < 0 && short_of_levels;
  known_[value] = {rank, again ? levels : -1, query_};
  *cut = *cut || again;
  return rank;
}

int64_t ValueRanks::Declared(const std::string& value) const {
  if (auto c = g_.constants.find(value); c != g_.constants.end()) return c->second.rank();
  auto declared = [](const ValueInfo& info) { return info.has_shape ? static_cast<int64_t>(info.shape.size()) : -1; };
  for (const ValueInfo& in : g_.inputs) {
    if (in.name == value) return declared(in);
  }
  if (auto outer = g_.outer_inputs.find(value); outer != g_.outer_inputs.end()) return declared(outer->second);
  return -1;
}

int64_t ValueRanks::ByProducer(const std::string& value, int levels, bool* cut) {
  const Id p = g_.nodes.Producer(value);
  if (p == kNone) return -1;
  if (levels <= 0) {
    *cut = true;
    return -1;
  }
  const Node& node = g_.nodes[p];
  const auto& n = *node.proto;
  auto in = [&](int k) -> int64_t { return HasInput(n, k) ? Walk(n.input(k), levels - 1, cut) : -1; };
  // The highest rank of the inputs (empty ones skipped), each proven; -1 otherwise.
  auto broadcast = [&]() {
    int64_t rank = -1;
    for (int k = 0; k < n.input_size(); ++k) {
      if (!HasInput(n, k)) continue;
      const int64_t r = in(k);
      if (r < 0) return int64_t{-1};
      rank = std::max(rank, r);
    }
    return rank;
  };
  const bool first = n.output(0) == value;
  const std::string& op = node.op_type();

  if (node.domain.empty()) {
    if (op == "Split" || op == "Dropout" || op == "TopK") return in(0);  // every output
    if (op == "DynamicQuantizeLinear") return first ? in(0) : 0;         // then the scale and zero point
    if (!first) return -1;
    if (KeepsFirstRank(op)) return in(0);
    if (Broadcasts(op)) return broadcast();
    if (op == "Concat") {  // its inputs share their rank: one proven is enough
      for (int k = 0; k < n.input_size(); ++k) {
        if (const int64_t r = in(k); r >= 0) return r;
      }
      return -1;
    }
    if (op == "Transpose") {
      const auto* perm = Attr(n, "perm");
      return perm != nullptr ? perm->ints_size() : in(0);
    }
    if (op == "Reshape") {
      if (node.opset < 5) {
        const auto* shape = Attr(n, "shape");
        return shape != nullptr ? shape->ints_size() : -1;
      }
      if (!HasInput(n, 1)) return -1;
      if (auto c = g_.constants.find(n.input(1)); c != g_.constants.end()) {
        return c->second.dtype() == DataType::kInt64 && c->second.rank() == 1 ? c->second.size() : -1;
      }
      // Reshape(x, Shape(y)): y's rank.
      const Id s = g_.nodes.Producer(n.input(1));
      if (s == kNone || !IsOp(g_.nodes[s], "Shape") || Attr(*g_.nodes[s].proto, "start") != nullptr ||
          Attr(*g_.nodes[s].proto, "end") != nullptr) {
        return -1;
      }
      return Walk(g_.nodes[s].proto->input(0), levels - 1, cut);
    }
    if (op == "Unsqueeze" || op == "Squeeze") {
      int64_t axes = -1;
      if (node.opset < 13) {
        if (const auto* a = Attr(n, "axes"); a != nullptr) axes = a->ints_size();
      } else if (HasInput(n, 1)) {
        auto c = g_.constants.find(n.input(1));
        if (c != g_.constants.end() && c->second.dtype() == DataType::kInt64 && c->second.rank() <= 1) {
          axes = c->second.size();
        }
      }
      const int64_t x = axes < 0 ? -1 : in(0);  // a Squeeze of every axis of 1 depends on the shape
      if (x < 0) return -1;
      return op == "Unsqueeze" ? x + axes : (x >= axes ? x - axes : -1);
    }
    if (IsReduction(op)) return IntAttr(n, "keepdims", 1) != 0 ? in(0) : -1;
    if (op == "MatMul" || op == "MatMulInteger" || op == "QLinearMatMul") {
      const int64_t a = in(0), b = in(op == "QLinearMatMul" ? 3 : 1);
      return a >= 2 && b >= 2 ? std::max(a, b) : -1;  // a 1-D operand drops an axis
    }
    if (op == "Shape") return 1;
    if (op == "Size") return 0;
    if (op == "Flatten" || op == "Gemm") return 2;
    return -1;
  }
  if (!first) return -1;
  if (node.domain == kMsDomain) {
    if (op == "QLinearAdd" || op == "QLinearMul") {  // A and B are inputs 0 and 3
      const int64_t a = in(0), b = a < 0 ? -1 : in(3);
      return b < 0 ? -1 : std::max(a, b);
    }
    if (op == "QLinearConcat") {  // its data are inputs 2, 5, 8, ...
      for (int k = 2; k < n.input_size(); k += 3) {
        if (const int64_t r = in(k); r >= 0) return r;
      }
      return -1;
    }
    static const std::set<std::string> kKeeps = {
        "QLinearLeakyRelu", "QLinearSigmoid", "QLinearSoftmax", "QLinearAveragePool", "QLinearGlobalAveragePool",
        "QLinearConv", "FusedConv", "Gelu", "FastGelu", "BiasGelu", "QuickGelu"};
    return kKeeps.count(op) != 0 ? in(0) : -1;
  }
  if (node.domain == kOnnxflowDomain) {
    if (op == internal_ops::kQLinearConvNhwc || op == internal_ops::kMaxPoolNhwc) return 4;
    if (op == internal_ops::kElementwiseChain) {  // X's rank, or its largest constant's
      const int64_t x = in(0);
      return x < 0 ? -1 : std::max(x, IntAttr(n, "rank", 0));
    }
    if (op == internal_ops::kFusedConv || op == internal_ops::kByteLookup ||
        op == internal_ops::kDequantizeAccumulator) {
      return in(0);
    }
  }
  return -1;
}

}  // namespace onnxflow::graph
