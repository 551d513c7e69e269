#include "graph/channel_scale_fusion.h"

#include <memory>
#include <string>

#include "graph/fusion_util.h"
#include "ops/blocked/blocked_layout.h"
#include "ops/framework/internal_ops.h"

namespace onnxflow::graph {
namespace {

// How far back the proofs below look: a gate is a few nodes from its pool (two convolutions and
// their activations, through a reorder or two).
constexpr int kMaxDepth = 12;

// A convolution whose output has its input's spatial size when that is 1 x 1: a 1 x 1 kernel
// without padding (any stride keeps one pixel one pixel).
bool KeepsOnePixel(const Graph& g, const Node& n) {
  const bool conv = IsOp(n, "Conv") || IsInternal(n, internal_ops::kFusedConv) ||
                    IsInternal(n, internal_ops::kBlockedConv);
  if (!conv || n.proto->input_size() < 2) return false;
  const Tensor* w = WeightConstant(g, *n.proto, 1);
  if (w == nullptr || w->rank() != 4 || w->dim(2) != 1 || w->dim(3) != 1) return false;
  if (const auto* pads = Attr(*n.proto, "pads")) {
    for (int64_t p : pads->ints()) {
      if (p != 0) return false;
    }
  }
  return true;
}

// The input an elementwise op computes on when its other inputs are constants (a scalar operand of
// Add, Sub, Mul or Div; Clip's bounds), or empty: the op keeps its input's shape and layout.
std::string ElementwiseInput(const Graph& g, const Node& n) {
  const auto& p = *n.proto;
  if (p.output_size() != 1 || p.input_size() == 0) return "";
  for (const char* op : {"Sigmoid", "HardSigmoid", "Relu", "LeakyRelu", "Tanh", "HardSwish", "Identity"}) {
    if (IsOp(n, op) && p.input_size() == 1) return p.input(0);
  }
  if (IsInternal(n, internal_ops::kElementwiseChain) && p.input_size() == 1) return p.input(0);
  if (IsOp(n, "Clip")) {
    for (int i = 1; i < p.input_size(); ++i) {
      if (!p.input(i).empty() && g.constants.count(p.input(i)) == 0) return "";
    }
    return p.input(0);
  }
  if ((IsOp(n, "Add") || IsOp(n, "Sub") || IsOp(n, "Mul") || IsOp(n, "Div")) && n.opset >= 7 &&
      p.input_size() == 2) {
    for (int i = 0; i < 2; ++i) {
      auto c = g.constants.find(p.input(1 - i));
      if (c != g.constants.end() && c->second.size() == 1) return p.input(i);
    }
  }
  return "";
}

bool IsGlobalPool(const Node& n) {
  return IsOp(n, "GlobalAveragePool") || IsOp(n, "GlobalMaxPool") ||
         IsInternal(n, internal_ops::kBlockedGlobalAveragePool) || IsInternal(n, internal_ops::kBlockedGlobalMaxPool);
}

// `v` has one pixel per channel: it comes from a global pool through 1 x 1 convolutions,
// elementwise ops and reorders.
bool OnePixel(const Graph& g, const std::string& v, int depth = 0) {
  const NodeGraph::Id p = g.nodes.Producer(v);
  if (p == kNone || depth > kMaxDepth) return false;
  const Node& n = g.nodes[p];
  if (IsGlobalPool(n)) return true;
  if (KeepsOnePixel(g, n)) return OnePixel(g, n.proto->input(0), depth + 1);
  if (IsInternal(n, internal_ops::kToBlocked) || IsInternal(n, internal_ops::kFromBlocked)) {
    return OnePixel(g, n.proto->input(0), depth + 1);
  }
  const std::string in = ElementwiseInput(g, n);
  return !in.empty() && OnePixel(g, in, depth + 1);
}

// `v` is a blocked value of one pixel per channel, [N, C/16, 1, 1, 16]: elementwise ops back to
// the blocked op that wrote it (a pool, a convolution or a reorder into the layout), which has one
// pixel.
bool BlockedGate(const Graph& g, const std::string& v, int depth = 0) {
  const NodeGraph::Id p = g.nodes.Producer(v);
  if (p == kNone || depth > kMaxDepth) return false;
  const Node& n = g.nodes[p];
  if (IsInternal(n, internal_ops::kBlockedGlobalAveragePool) || IsInternal(n, internal_ops::kBlockedGlobalMaxPool)) {
    return true;
  }
  if (IsInternal(n, internal_ops::kBlockedConv) && n.proto->output(0) == v) {
    return KeepsOnePixel(g, n) && OnePixel(g, n.proto->input(0));
  }
  if (IsInternal(n, internal_ops::kToBlocked)) return OnePixel(g, n.proto->input(0));
  const std::string in = ElementwiseInput(g, n);
  return !in.empty() && BlockedGate(g, in, depth + 1);
}

}  // namespace

std::optional<Patch> FuseChannelScaleIntoConv(Rewriter& r, NodeGraph::Id index) {
  const Graph& g = r.graph();
  const Node& conv = r[index];
  const auto& c = *conv.proto;
  if (!IsInternal(conv, internal_ops::kBlockedConv) || HasInput(c, 5)) return std::nullopt;
  // Not a stem (it reads the plain image) and not a 3 x 3 one (Winograd's, which takes no scale).
  const Tensor* w = WeightConstant(g, c, 1);
  if (w == nullptr || w->rank() != 4 || w->dim(2) != 1 || w->dim(3) != 1 ||
      w->dim(1) * IntAttr(c, "group", 1) < kChannelBlock) {
    return std::nullopt;
  }
  const NodeGraph::Id m = SoleReaderProducer(g, c.input(0));
  if (m == kNone || SoleReader(g, c.input(0)) != index) return std::nullopt;
  const Node& mul = r[m];
  const auto& mp = *mul.proto;
  if (!IsOp(mul, "Mul") || mul.opset < 7 || mp.input_size() != 2 || mp.output_size() != 1) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    if (!BlockedGate(g, mp.input(i))) continue;
    auto fused = std::make_shared<onnx::NodeProto>(c);
    fused->set_input(0, mp.input(1 - i));
    while (fused->input_size() < 6) fused->add_input("");
    fused->set_input(5, mp.input(i));
    return Patch{{index, m}, {WithProto(conv, std::move(fused))}, {}};
  }
  return std::nullopt;
}

}  // namespace onnxflow::graph
