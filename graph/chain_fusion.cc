#include "graph/chain_fusion.h"

#include <algorithm>
#include <limits>
#include <memory>
#include <string>

#include "graph/fusion.h"
#include "graph/fusion_util.h"
#include "ops/activation/elementwise_chain.h"
#include "ops/framework/internal_ops.h"

namespace onnxflow::graph {
namespace {

bool IsChain(const Node& n) { return n.domain == kFusedDomain && n.op_type() == internal_ops::kElementwiseChain; }

// A node read as one step of a chain whose running value enters through input `value_input`.
struct StepMatch {
  ChainStep step;
  std::string op;
  int64_t constant_rank = 0;  // rank of a scalar constant operand (it may broadcast Y up to it)
};

// A float constant holding one element, with its rank.
bool ScalarConstant(const Graph& g, const onnx::NodeProto& n, int input, float* value, int64_t* rank) {
  const Tensor* c = FloatConstant(g, n, input);
  if (c == nullptr || c->size() != 1) return false;
  *value = c->data<float>()[0];
  *rank = static_cast<int64_t>(c->shape().size());
  return true;
}

// Reads `n` as a step of the chain over `chain_input` (X), its running value arriving at input
// `value_input`. False when `n` is not a step the chain can carry.
bool MatchStep(const Graph& g, const Node& n, int value_input, const std::string& chain_input, StepMatch* m) {
  const onnx::NodeProto& p = *n.proto;
  if (!n.domain.empty() || p.output_size() != 1 || value_input >= p.input_size()) return false;
  ChainAttributes attributes{
      [&](const char* name, float fallback) { const auto* a = Attr(p, name); return a ? a->f() : fallback; },
      [&](const char* name, const std::string& fallback) {
        const auto* a = Attr(p, name);
        return a ? a->s() : fallback;
      }};
  if (!ChainStepFor(p.op_type(), n.opset, attributes, &m->step)) return false;
  m->op = p.op_type();
  m->constant_rank = 0;
  if (m->step.kind != ChainStep::kBinary) {
    if (value_input != 0) return false;
    if (m->op != "Clip" || n.opset < 11) return p.input_size() == 1;
    // Clip from opset 11: optional scalar bounds, which must be constants here.
    for (int k = 1; k < p.input_size(); ++k) {
      if (p.input(k).empty()) continue;
      float bound;
      int64_t rank;
      if (!ScalarConstant(g, p, k, &bound, &rank) || rank != 0) return false;
      (k == 1 ? m->step.params.alpha : m->step.params.beta) = bound;
    }
    return true;
  }
  if (p.input_size() != 2) return false;
  const int other = 1 - value_input;
  const bool right = other == 1;
  if (ScalarConstant(g, p, other, &m->step.constant, &m->constant_rank)) {
    m->step.operand = right ? ChainOperand::kConstantRight : ChainOperand::kConstantLeft;
    return true;
  }
  if (p.input(other) == chain_input) {
    m->step.operand = right ? ChainOperand::kInputRight : ChainOperand::kInputLeft;
    return true;
  }
  return false;
}

// True when the load can tell that `name` holds float32: a declared or constant type, the output
// of a float Conv/Gemm/MatMul, or of an elementwise op with a float operand (they keep the type).
bool IsFloatValue(const Graph& g, const std::string& name, int depth = 0) {
  const DataType known = KnownType(g, name);
  if (known != DataType::kUndefined) return known == DataType::kFloat;
  const Id p = g.nodes.Producer(name);
  if (p == kNone || depth > 8) return false;
  const Node& n = g.nodes[p];
  if (IsChain(n)) return true;
  const std::string& op = n.op_type();
  const bool product = op == "Conv" || op == "Gemm" || op == "MatMul" || op == internal_ops::kFusedConv ||
                       op == internal_ops::kFusedGemm || op == internal_ops::kFusedMatMul;
  if (product) return (n.domain.empty() || n.domain == kFusedDomain) && IsFloatProduct(g, n);
  ChainStep step;
  ChainAttributes none{[](const char*, float f) { return f; }, [](const char*, const std::string& s) { return s; }};
  if (!n.domain.empty() || !ChainStepFor(op, n.opset, none, &step)) return false;
  const int operands = step.kind == ChainStep::kBinary ? 2 : 1;
  for (int k = 0; k < std::min(operands, n.proto->input_size()); ++k) {
    if (IsFloatValue(g, n.proto->input(k), depth + 1)) return true;
  }
  return false;
}

// Reads a plain node as the first step of a new chain: the chain's input is its value input (for a
// binary op, the operand that is not a scalar constant; x * x reads x on both sides).
bool MatchHead(const Graph& g, const Node& n, std::string* chain_input, StepMatch* m) {
  if (!n.domain.empty() || n.proto->input_size() == 0) return false;
  for (int value_input = 0; value_input < std::min(2, n.proto->input_size()); ++value_input) {
    *chain_input = n.proto->input(value_input);
    if (!chain_input->empty() && MatchStep(g, n, value_input, *chain_input, m)) return true;
  }
  return false;
}

}  // namespace

std::optional<Patch> FuseElementwiseChain(Rewriter& r, Id id) {
  const Graph& g = r.graph();
  const Node& head = r[id];
  std::string chain_input;
  StepMatch first;
  if (!MatchHead(g, head, &chain_input, &first) || !IsFloatValue(g, chain_input)) return std::nullopt;
  // The whole chain at once, from its head (the walk is in order, so the head is seen first):
  // each step is the sole reader of the one before. One node is built per chain, so a chain of N
  // ops loads in linear time (extending a copy per step was quadratic: 100,000 ops took 154 s).
  auto chain = std::make_shared<onnx::NodeProto>();
  chain->set_name(head.proto->name());
  chain->add_input(chain_input);
  ChainSpec::AppendTo(*chain, first.op, first.step, first.constant_rank);
  Patch patch{{id}, {}, {}};
  std::string value = head.proto->output(0);
  for (;;) {
    const Id next = SoleReader(g, value);
    if (next == kNone) break;
    const Node& cur = r[next];
    if (!cur.domain.empty() || cur.proto->output_size() != 1) break;
    StepMatch step;
    bool matched = false;
    for (int k = 0; k < std::min(2, cur.proto->input_size()) && !matched; ++k) {
      matched = cur.proto->input(k) == value && MatchStep(g, cur, k, chain_input, &step);
    }
    if (!matched) break;
    ChainSpec::AppendTo(*chain, step.op, step.step, step.constant_rank);
    patch.replaced.push_back(next);
    value = cur.proto->output(0);
  }
  if (patch.replaced.size() < 2) return std::nullopt;
  chain->add_output(value);
  patch.added.push_back(InternalNode(head, std::move(chain), internal_ops::kElementwiseChain));
  return patch;
}

}  // namespace onnxflow::graph
