// com.onnxflow ElementwiseChain (see elementwise_chain.h): the steps run block by block, each
// block of Y computed in place through the whole chain while it sits in L1.
#include "ops/activation/elementwise_chain.h"

#include <algorithm>
#include <iterator>
#include <limits>

#include "ops/framework/activation.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/parallel.h"

namespace onnxflow {
namespace {

// 2048 floats = 8 KiB of Y (and as much of X for steps that read it) per block: L1-resident.
constexpr int64_t kBlock = 2048;

bool UnaryMathCode(const std::string& op, FloatUnaryOp* code) {
  static const std::pair<const char*, FloatUnaryOp> kOps[] = {
      {"Abs", FloatUnaryOp::kAbs},   {"Neg", FloatUnaryOp::kNeg},         {"Sqrt", FloatUnaryOp::kSqrt},
      {"Exp", FloatUnaryOp::kExp},   {"Log", FloatUnaryOp::kLog},         {"Erf", FloatUnaryOp::kErf},
      {"Ceil", FloatUnaryOp::kCeil}, {"Floor", FloatUnaryOp::kFloor},     {"Round", FloatUnaryOp::kRound},
      {"Reciprocal", FloatUnaryOp::kReciprocal}};
  for (const auto& [name, value] : kOps) {
    if (op == name) {
      *code = value;
      return true;
    }
  }
  return false;
}

bool BinaryCode(const std::string& op, int opset, FloatBinaryOp* code) {
  // Before opset 7 (8 for Max/Min) these ops broadcast by attributes or not at all.
  if (opset >= 7 && op == "Add") *code = FloatBinaryOp::kAdd;
  else if (opset >= 7 && op == "Sub") *code = FloatBinaryOp::kSub;
  else if (opset >= 7 && op == "Mul") *code = FloatBinaryOp::kMul;
  else if (opset >= 7 && op == "Div") *code = FloatBinaryOp::kDiv;
  else if (opset >= 8 && op == "Max") *code = FloatBinaryOp::kMax;
  else if (opset >= 8 && op == "Min") *code = FloatBinaryOp::kMin;
  else return false;
  return true;
}

// The activations the chain carries, with their parameters (ONNX defaults from the vocabulary,
// ops/framework/activation.h).
bool ActivationCode(const std::string& op, int opset, const ChainAttributes& attrs, ActOp* code, ActParams* p) {
  static constexpr ActOp kCarried[] = {ActOp::kRelu,     ActOp::kSigmoid,     ActOp::kTanh,  ActOp::kSoftplus,
                                       ActOp::kSoftsign, ActOp::kHardSwish,   ActOp::kMish,  ActOp::kLeakyRelu,
                                       ActOp::kElu,      ActOp::kHardSigmoid, ActOp::kGelu,  ActOp::kClip};
  const ActivationOpDef* def = FindActivationOp(op);
  if (def == nullptr || opset < def->since ||
      std::find(std::begin(kCarried), std::end(kCarried), def->op) == std::end(kCarried)) {
    return false;
  }
  *code = def->op;
  *p = ReadActParams(*def, attrs.get_float);
  if (def->op == ActOp::kGelu) {
    const std::string approximate = attrs.get_string("approximate", "none");
    if (approximate != "none" && approximate != "tanh") return false;
    if (approximate == "tanh") *code = ActOp::kGeluTanh;
  }
  return true;
}

class ElementwiseChainKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(ChainSpec spec, ChainSpec::Parse(info));
    auto kernel = std::unique_ptr<ElementwiseChainKernel>(new ElementwiseChainKernel());
    kernel->rank_ = spec.rank;
    kernel->steps_ = std::move(spec.steps);
    return std::unique_ptr<OpKernel>(std::move(kernel));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->dtype() != DataType::kFloat) {
      return InvalidArgument("ElementwiseChain: input X is " + std::string(DataTypeName(x->dtype())) + ", the chain is float only");
    }
    Shape shape = x->shape();
    if (static_cast<int64_t>(shape.size()) < rank_) shape.insert(shape.begin(), rank_ - shape.size(), 1);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, shape));
    const float* xd = x->data<float>();
    float* yd = y->mutable_data<float>();
    const int64_t blocks = (x->size() + kBlock - 1) / kBlock;
    ParallelFor(ctx, blocks, kBlock * static_cast<int64_t>(steps_.size()) * 4, [&](int64_t b0, int64_t b1) {
      for (int64_t b = b0; b < b1; ++b) {
        const int64_t begin = b * kBlock, count = std::min(kBlock, x->size() - begin);
        RunBlock(xd + begin, yd + begin, count);
      }
    });
    return Status::Ok();
  }

 private:
  ElementwiseChainKernel() = default;

  // y = the chain applied to x, for n <= kBlock floats; the first step reads x, the rest y.
  void RunBlock(const float* x, float* y, int64_t n) const {
    const float* v = x;
    for (const ChainStep& s : steps_) {
      switch (s.kind) {
        case ChainStep::kUnaryMath:
          FloatUnary(static_cast<FloatUnaryOp>(s.code), v, y, n);
          break;
        case ChainStep::kActivation:
          ActivationFloat(static_cast<ActOp>(s.code), s.params, v, y, n);
          break;
        case ChainStep::kBinary: {
          const auto op = static_cast<FloatBinaryOp>(s.code);
          switch (s.operand) {
            case ChainOperand::kConstantRight: FloatBinary(op, v, false, &s.constant, true, y, n); break;
            case ChainOperand::kConstantLeft: FloatBinary(op, &s.constant, true, v, false, y, n); break;
            case ChainOperand::kInputRight: FloatBinary(op, v, false, x, false, y, n); break;
            case ChainOperand::kInputLeft: FloatBinary(op, x, false, v, false, y, n); break;
            case ChainOperand::kNone: break;
          }
          break;
        }
      }
      v = y;
    }
  }

  std::vector<ChainStep> steps_;
  int64_t rank_ = 0;
};

}  // namespace

void ChainSpec::Append(const std::string& op, const ChainStep& step, int64_t constant_rank) {
  ops.push_back(op);
  steps.push_back(step);
  rank = std::max(rank, constant_rank);
}

namespace {

// The attribute `name` of `node`, added empty when missing.
onnx::AttributeProto* FindOrAdd(onnx::NodeProto& node, const char* name, onnx::AttributeProto::AttributeType type) {
  for (auto& a : *node.mutable_attribute()) {
    if (a.name() == name) return &a;
  }
  return ResetAttribute(node, name, type);
}

}  // namespace

void ChainSpec::AppendTo(onnx::NodeProto& node, const std::string& op, const ChainStep& step,
                         int64_t constant_rank) {
  using A = onnx::AttributeProto;
  FindOrAdd(node, "ops", A::STRINGS)->add_strings(op);
  FindOrAdd(node, "kinds", A::INTS)->add_ints(step.kind);
  FindOrAdd(node, "codes", A::INTS)->add_ints(step.code);
  FindOrAdd(node, "operands", A::INTS)->add_ints(static_cast<int64_t>(step.operand));
  FindOrAdd(node, "constants", A::FLOATS)->add_floats(step.constant);
  FindOrAdd(node, "alphas", A::FLOATS)->add_floats(step.params.alpha);
  FindOrAdd(node, "betas", A::FLOATS)->add_floats(step.params.beta);
  FindOrAdd(node, "gammas", A::FLOATS)->add_floats(step.params.gamma);
  A* rank = FindOrAdd(node, "rank", A::INT);
  rank->set_i(std::max(rank->i(), constant_rank));
}

void ChainSpec::WriteTo(onnx::NodeProto& node) const {
  for (const char* name : {"ops", "kinds", "codes", "operands", "constants", "alphas", "betas", "gammas", "rank"}) {
    RemoveAttribute(node, name);
  }
  for (size_t i = 0; i < steps.size(); ++i) AppendTo(node, ops[i], steps[i], 0);
  SetAttribute(node, "rank", rank);
}

Result<ChainSpec> ChainSpec::Parse(const KernelInfo& info) {
  ChainSpec spec;
  spec.ops = info.GetStrings("ops");
  const std::vector<int64_t> kinds = info.GetInts("kinds"), codes = info.GetInts("codes"),
                             operands = info.GetInts("operands");
  const std::vector<float> constants = info.GetFloats("constants"), alphas = info.GetFloats("alphas"),
                           betas = info.GetFloats("betas"), gammas = info.GetFloats("gammas");
  const size_t n = spec.ops.size();
  if (n == 0 || kinds.size() != n || codes.size() != n || operands.size() != n || constants.size() != n ||
      alphas.size() != n || betas.size() != n || gammas.size() != n) {
    return InvalidArgument("ElementwiseChain: the step attributes must all have one entry per step");
  }
  spec.rank = info.GetInt("rank", 0);
  for (size_t i = 0; i < n; ++i) {
    ChainStep s;
    s.kind = static_cast<ChainStep::Kind>(kinds[i]);
    s.code = codes[i];
    s.operand = static_cast<ChainOperand>(operands[i]);
    s.constant = constants[i];
    s.params.alpha = alphas[i];
    s.params.beta = betas[i];
    s.params.gamma = gammas[i];
    const bool binary = s.kind == ChainStep::kBinary;
    const bool valid_code = s.kind == ChainStep::kUnaryMath    ? s.code >= 0 && s.code <= int64_t(FloatUnaryOp::kRound)
                            : s.kind == ChainStep::kActivation ? s.code >= 0 && s.code <= int64_t(ActOp::kClip)
                            : binary                           ? s.code >= 0 && s.code <= int64_t(FloatBinaryOp::kMin)
                                                               : false;
    const bool valid_operand = binary ? operands[i] >= 1 && operands[i] <= 4 : operands[i] == 0;
    if (!valid_code || !valid_operand) {
      return InvalidArgument("ElementwiseChain: step " + std::to_string(i) + " (" + spec.ops[i] + ") is malformed");
    }
    spec.steps.push_back(s);
  }
  return spec;
}

bool ChainStepFor(const std::string& op, int opset, const ChainAttributes& attributes, ChainStep* step) {
  *step = ChainStep{};
  FloatUnaryOp unary;
  FloatBinaryOp binary;
  ActOp activation;
  if (UnaryMathCode(op, &unary)) {
    step->kind = ChainStep::kUnaryMath;
    step->code = static_cast<int64_t>(unary);
  } else if (BinaryCode(op, opset, &binary)) {
    step->kind = ChainStep::kBinary;
    step->code = static_cast<int64_t>(binary);
  } else if (ActivationCode(op, opset, attributes, &activation, &step->params)) {
    step->kind = ChainStep::kActivation;
    step->code = static_cast<int64_t>(activation);
  } else {
    return false;
  }
  return true;
}

ONNXFLOW_REGISTRAR Status RegisterElementwiseChainKernel(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kElementwiseChain, internal_ops::kVersion, kOpenEnded, Make<ElementwiseChainKernel>());
}

}  // namespace onnxflow
