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
bool IsFloatValue(const Graph& g, const Uses& u, const std::string& name, int depth = 0) {
  const DataType known = KnownType(g, name);
  if (known != DataType::kUndefined) return known == DataType::kFloat;
  auto it = u.producer.find(name);
  if (it == u.producer.end() || depth > 8) return false;
  const Node& n = g.nodes[it->second];
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
    if (IsFloatValue(g, u, n.proto->input(k), depth + 1)) return true;
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

bool FuseElementwiseChain(Graph* g, Uses& u, size_t index, std::vector<bool>* removed) {
  const Node& cur = g->nodes[index];
  if (!cur.domain.empty() || cur.proto->output_size() != 1) return false;
  for (int value_input = 0; value_input < std::min(2, cur.proto->input_size()); ++value_input) {
    const std::string& value = cur.proto->input(value_input);
    const int p = SoleReaderProducer(u, value);
    if (p < 0 || (*removed)[p]) continue;
    Node& prev = g->nodes[p];
    // The chain so far: an ElementwiseChain already, or a plain step that starts one.
    std::string chain_input;
    StepMatch head;
    if (IsChain(prev)) {
      chain_input = prev.proto->input(0);
    } else if (!MatchHead(*g, prev, &chain_input, &head) || !IsFloatValue(*g, u, chain_input)) {
      continue;
    }
    StepMatch step;
    if (!MatchStep(*g, cur, value_input, chain_input, &step)) continue;

    // A chain grows one step at a time: extending its own proto in place keeps a chain of N ops
    // linear to build (copying it at every step was quadratic: 100,000 elementwise ops took 154 s
    // to load). The proto was made non-const (make_shared<NodeProto>, here or by the loader), so
    // writing through it is sound while nothing else shares it.
    std::shared_ptr<onnx::NodeProto> chain;
    if (IsChain(prev) && prev.proto.use_count() == 1) {
      chain = std::const_pointer_cast<onnx::NodeProto>(prev.proto);
    } else if (IsChain(prev)) {
      chain = std::make_shared<onnx::NodeProto>(*prev.proto);
    } else {
      chain = std::make_shared<onnx::NodeProto>();
      chain->set_name(prev.proto->name());
      chain->add_input(chain_input);
      chain->add_output("");
      ChainSpec::AppendTo(*chain, head.op, head.step, head.constant_rank);
    }
    ChainSpec::AppendTo(*chain, step.op, step.step, step.constant_rank);
    MakeInternal(&prev, chain.get(), internal_ops::kElementwiseChain);
    chain->set_output(0, cur.proto->output(0));
    if (step.step.operand == ChainOperand::kInputLeft || step.step.operand == ChainOperand::kInputRight) {
      --u.readers[chain_input];  // the chain reads X once, as its input
    }
    prev.proto = std::move(chain);
    u.producer[cur.proto->output(0)] = p;
    (*removed)[index] = true;
    return true;
  }
  return false;
}

}  // namespace onnxflow::graph
