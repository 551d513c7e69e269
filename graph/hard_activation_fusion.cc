#include "graph/hard_activation_fusion.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "graph/fusion_util.h"
#include "ops/math/float_view.h"

namespace onnxflow::graph {
namespace {

// HardSwish's own HardSigmoid: y = x * clip(x / 6 + 1 / 2, 0, 1).
constexpr float kSwishAlpha = 1.0f / 6.0f, kSwishBeta = 0.5f;

// When `id` is op(v, c) or op(c, v), `op` Add or Mul and c a float constant scalar, v; empty
// otherwise. `c` receives the constant.
std::string ScalarOperand(const Rewriter& r, Id id, const char* op, float* c) {
  const Node& n = r[id];
  const auto& p = *n.proto;
  if (!IsOp(n, op) || n.opset < 7 || p.input_size() != 2 || p.output_size() != 1) return "";
  if (FloatScalar(r.graph(), p, 1, c)) return p.input(0);
  if (FloatScalar(r.graph(), p, 0, c)) return p.input(1);
  return "";
}

// When `id` divides a value by `divisor` (Div by it, or Mul by its reciprocal as exported: 1/6 as
// 0.16666667, or rounded to half), that value; empty otherwise.
std::string DividedBy(const Rewriter& r, Id id, float divisor) {
  const Node& n = r[id];
  if (IsOp(n, "Div")) return OtherThanConstant(r.graph(), n, "Div", divisor, /*either_side=*/false);
  return OtherThanConstant(r.graph(), n, "Mul", 1.0f / divisor, /*either_side=*/true);
}

// The parameters of activation node `id` when it is `op`, read as the epilogues read them (the
// vocabulary's defaults; Clip's bounds as attributes before opset 11, constant inputs from it).
bool ActivationParams(const Rewriter& r, Id id, const char* op, float* alpha, float* beta) {
  const Node& act = r[id];
  FusedActivationSpec spec;
  if (!IsOp(act, op) || !EpilogueOf(r.graph(), act, &spec)) return false;
  *alpha = spec.activation.alpha;
  *beta = spec.activation.beta;
  return true;
}

bool ClipBounds(const Rewriter& r, Id id, float* lo, float* hi) { return ActivationParams(r, id, "Clip", lo, hi); }

// x when `value`, read only by the pattern, is Clip(Add(x, shift), 0, hi) with Add's x read
// elsewhere too; the Add and the Clip are appended to `nodes`.
std::string ClipOfShift(const Rewriter& r, const std::string& value, float shift, float hi, std::vector<Id>* nodes) {
  const Id clip = SoleReaderProducer(r.graph(), value);
  float lo = 0, top = 0;
  if (clip == kNone || !ClipBounds(r, clip, &lo, &top) || lo != 0.0f || top != hi) return "";
  const Id add = SoleReaderProducer(r.graph(), r[clip].proto->input(0));
  float b = 0;
  const std::string x = add == kNone ? "" : ScalarOperand(r, add, "Add", &b);
  if (x.empty() || b != shift) return "";
  nodes->insert(nodes->end(), {add, clip});
  return x;
}

bool IsActivationType(const Graph& g, const std::string& x) { return IsFloatLike(KnownType(g, x)); }

// ONNX op `op` (since `opset`) of x, writing what the pattern's `last` node wrote.
Node ActivationNode(const Node& last, const char* op, const std::string& x, int opset,
                    const std::vector<std::pair<const char*, float>>& attributes = {}) {
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_name(last.proto->name());
  proto->set_op_type(op);
  for (const auto& [name, value] : attributes) SetFloatAttr(proto.get(), name, value);
  proto->add_input(x);
  proto->add_output(last.proto->output(0));
  Node node = WithProto(last, std::move(proto));
  node.opset = std::max(last.opset, opset);
  return node;
}

}  // namespace

std::optional<Patch> FuseHardSigmoid(Rewriter& r, Id id) {
  const Graph& g = r.graph();
  // The division by hi, then the Clip to [0, hi] it undoes.
  Id clip = kNone;
  float lo = 0, hi = 0;
  std::vector<Id> nodes = {id};
  if (ClipBounds(r, id, &lo, &hi)) {
    if (hi != 1.0f) return std::nullopt;
    clip = id;
  } else {
    const Node& n = r[id];
    if ((!IsOp(n, "Div") && !IsOp(n, "Mul")) || n.proto->input_size() != 2) return std::nullopt;
    for (int side = 0; side < 2 && clip == kNone; ++side) {
      const Id p = SoleReaderProducer(g, n.proto->input(side));
      if (p != kNone && ClipBounds(r, p, &lo, &hi) && hi > 0.0f && DividedBy(r, id, hi) == n.proto->input(side)) {
        clip = p;
      }
    }
    if (clip == kNone) return std::nullopt;
    nodes.push_back(clip);
  }
  if (lo != 0.0f) return std::nullopt;
  // Below the Clip: Add(u, b), then optionally Mul(x, a); at least one of them.
  float a = 1.0f, b = 0.0f;
  std::string x = r[clip].proto->input(0);
  if (const Id add = SoleReaderProducer(g, x); add != kNone) {
    const std::string u = ScalarOperand(r, add, "Add", &b);
    if (!u.empty()) {
      nodes.push_back(add);
      x = u;
    }
  }
  if (const Id mul = SoleReaderProducer(g, x); mul != kNone) {
    const std::string u = ScalarOperand(r, mul, "Mul", &a);
    if (!u.empty()) {
      nodes.push_back(mul);
      x = u;
    }
  }
  if (nodes.size() < (clip == id ? 2u : 3u) || !IsActivationType(g, x)) return std::nullopt;
  return Patch{nodes, {ActivationNode(r[id], "HardSigmoid", x, 6, {{"alpha", a / hi}, {"beta", b / hi}})}, {}};
}

std::optional<Patch> FuseHardSwish(Rewriter& r, Id id) {
  const Graph& g = r.graph();
  const Node& last = r[id];
  const auto& m = *last.proto;
  if (m.input_size() != 2 || m.output_size() != 1) return std::nullopt;
  // x * HardSigmoid(x) with HardSwish's parameters.
  if (IsOp(last, "Mul") && last.opset >= 7) {
    for (int side = 0; side < 2; ++side) {
      const std::string& x = m.input(1 - side);
      const Id h = SoleReaderProducer(g, m.input(side));
      float a = 0, b = 0;
      if (h == kNone || !ActivationParams(r, h, "HardSigmoid", &a, &b) || r[h].proto->input(0) != x) continue;
      if (std::fabs(a - kSwishAlpha) > 1e-6f || std::fabs(b - kSwishBeta) > 1e-6f || !IsActivationType(g, x)) continue;
      return Patch{{h, id}, {ActivationNode(last, "HardSwish", x, 14)}, {}};
    }
  }
  // (x * Clip(x + 3, 0, 6)) / 6.
  const std::string product = DividedBy(r, id, 6.0f);
  const Id mul = product.empty() ? kNone : SoleReaderProducer(g, product);
  if (mul == kNone || !IsOp(r[mul], "Mul") || r[mul].opset < 7 || r[mul].proto->input_size() != 2) return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    std::vector<Id> nodes = {id, mul};
    const std::string& x = r[mul].proto->input(1 - side);
    if (ClipOfShift(r, r[mul].proto->input(side), 3.0f, 6.0f, &nodes) != x || !IsActivationType(g, x)) continue;
    return Patch{nodes, {ActivationNode(last, "HardSwish", x, 14)}, {}};
  }
  return std::nullopt;
}

}  // namespace onnxflow::graph
