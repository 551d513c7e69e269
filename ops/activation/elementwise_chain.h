// com.onnxflow ElementwiseChain: a run of float32 elementwise ops that the load-time fusion
// (graph/chain_fusion.cc) found feeding one another, computed in one pass over the data. Every
// step runs the same vector array function as its standalone kernel, over blocks small enough to
// stay in L1, so the chain reads its input once and writes its output once instead of once per op
// (GELU written out as Div, Erf, Add, Mul, Mul is five passes over memory unfused).
//
// The value flowing down the chain is v, starting as the node's only input X. A step is unary
// (v = f(v)) or binary with a scalar constant or X itself as its other operand, on either side
// (v = v - c, v = c / v, v = x * v, ...). The steps are node attributes (ChainSpec writes and
// parses them), one entry per step:
//   ops       (strings) the ONNX op types, for messages
//   kinds     (ints)    ChainStep::Kind
//   codes     (ints)    FloatUnaryOp, ActOp or FloatBinaryOp, by kind
//   operands  (ints)    ChainOperand: where a binary step's other operand comes from
//   constants (floats)  the scalar operand of kConstant* steps
//   alphas, betas, gammas (floats) the activation parameters (ActParams)
//   rank      (int)     the rank of the largest scalar constant (Y = X's shape, with leading 1s
//                       up to this rank, as numpy broadcasting gives)
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "ops/activation/activation_simd.h"
#include "ops/elementwise/float_simd.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"

namespace onnxflow {

enum class ChainOperand : int64_t { kNone = 0, kConstantRight = 1, kConstantLeft = 2, kInputRight = 3, kInputLeft = 4 };

struct ChainStep {
  enum Kind : int64_t { kUnaryMath = 0, kActivation = 1, kBinary = 2 };
  Kind kind = kUnaryMath;
  int64_t code = 0;
  ActParams params;
  ChainOperand operand = ChainOperand::kNone;
  float constant = 0.0f;
};

// The ElementwiseChain node's attributes: graph/chain_fusion.cc appends steps and writes them,
// the kernel parses them.
struct ChainSpec {
  std::vector<std::string> ops;  // the ONNX op of each step, for messages
  std::vector<ChainStep> steps;
  int64_t rank = 0;

  // Adds a step made from ONNX op `op`, whose scalar constant operand (if any) has rank
  // `constant_rank`.
  void Append(const std::string& op, const ChainStep& step, int64_t constant_rank);
  void WriteTo(onnx::NodeProto& node) const;
  // Adds one step to the attributes of a chain `node` in place (what Append then WriteTo give, in
  // time independent of the chain's length: the fusion grows a chain of N steps in O(N)).
  static void AppendTo(onnx::NodeProto& node, const std::string& op, const ChainStep& step, int64_t constant_rank);
  // Refuses attributes that are not one entry per step, or a step of an unknown kind, code or
  // operand.
  static Result<ChainSpec> Parse(const KernelInfo& info);
};

// How an op's attributes are read (the fusion reads them from a NodeProto).
struct ChainAttributes {
  std::function<float(const char*, float)> get_float;
  std::function<std::string(const char*, const std::string&)> get_string;
};

// The step an ONNX op (default domain, at `opset`) becomes, without its operand; false when the
// op cannot be a chain step (not elementwise, not float-only semantics, or attributes the chain
// does not carry). Clip's bounds are not attributes from opset 11: the caller sets alpha/beta.
bool ChainStepFor(const std::string& op, int opset, const ChainAttributes& attributes, ChainStep* step);

}  // namespace onnxflow
