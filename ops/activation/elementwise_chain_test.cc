// com.onnxflow ElementwiseChain against the same steps computed one by one in scalar code, over
// sizes below, at and across the kernel's 2048-float blocks, on one and two threads.
#include <gtest/gtest.h>

#include <cmath>

#include "ops/activation/elementwise_chain.h"
#include "ops/activation/register.h"
#include "ops/elementwise/test_util.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

using testing_util::MakeTensor;

struct Step {
  const char* op;
  ChainStep::Kind kind;
  int64_t code;
  ChainOperand operand = ChainOperand::kNone;
  float constant = 0.0f;
  float alpha = 0.0f, beta = 0.0f;
};

OpTest ChainTest(const std::vector<Step>& steps, int64_t rank = 0) {
  OpTest test("ElementwiseChain", 1, "com.onnxflow");
  std::vector<std::string> ops;
  std::vector<int64_t> kinds, codes, operands;
  std::vector<float> constants, alphas, betas, gammas;
  for (const Step& s : steps) {
    ops.push_back(s.op);
    kinds.push_back(s.kind);
    codes.push_back(s.code);
    operands.push_back(static_cast<int64_t>(s.operand));
    constants.push_back(s.constant);
    alphas.push_back(s.alpha);
    betas.push_back(s.beta);
    gammas.push_back(0.0f);
  }
  test.Attr("ops", ops).Attr("kinds", kinds).Attr("codes", codes).Attr("operands", operands);
  test.Attr("constants", constants).Attr("alphas", alphas).Attr("betas", betas).Attr("gammas", gammas);
  test.Attr("rank", rank);
  return test;
}

std::vector<float> Ramp(int64_t n) {
  std::vector<float> v(n);
  for (int64_t i = 0; i < n; ++i) v[i] = static_cast<float>((i * 37) % 101) / 25.0f - 2.0f;
  return v;
}

// GELU written out: 0.5 * x * (1 + erf(x / sqrt(2))).
const std::vector<Step> kGelu = {
    {"Div", ChainStep::kBinary, int64_t(FloatBinaryOp::kDiv), ChainOperand::kConstantRight, 1.41421356f},
    {"Erf", ChainStep::kUnaryMath, int64_t(FloatUnaryOp::kErf)},
    {"Add", ChainStep::kBinary, int64_t(FloatBinaryOp::kAdd), ChainOperand::kConstantRight, 1.0f},
    {"Mul", ChainStep::kBinary, int64_t(FloatBinaryOp::kMul), ChainOperand::kInputLeft},
    {"Mul", ChainStep::kBinary, int64_t(FloatBinaryOp::kMul), ChainOperand::kConstantRight, 0.5f}};

TEST(ElementwiseChain, GeluOverBlocksAndThreads) {
  for (int64_t n : {1, 17, 2048, 2053, 20000}) {
    for (int threads : {1, 2}) {
      const std::vector<float> x = Ramp(n);
      std::vector<float> want(n);
      for (int64_t i = 0; i < n; ++i) want[i] = 0.5f * (x[i] * (1.0f + std::erf(x[i] / 1.41421356f)));
      OpTest test = ChainTest(kGelu);
      test.Input(Tensor::FromVector<float>({n}, x)).Threads(threads);
      auto y = test.Run(RegisterActivationKernels);
      ASSERT_TRUE(y.ok()) << y.status().ToString();
      SCOPED_TRACE("n=" + std::to_string(n) + " threads=" + std::to_string(threads));
      EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({n}, want), y->at(0).tensor(), 1e-5, 1e-6));
    }
  }
}

TEST(ElementwiseChain, OperandsOnEitherSideAndActivations) {
  // v = clip(relu(3 - 2 / (x / v0...))) built step by step: constants and X on the left and right.
  const std::vector<Step> steps = {
      {"Mul", ChainStep::kBinary, int64_t(FloatBinaryOp::kMul), ChainOperand::kInputRight},     // x * x
      {"Sub", ChainStep::kBinary, int64_t(FloatBinaryOp::kSub), ChainOperand::kConstantLeft, 3},  // 3 - v
      {"Div", ChainStep::kBinary, int64_t(FloatBinaryOp::kDiv), ChainOperand::kInputLeft},      // x / v
      {"Max", ChainStep::kBinary, int64_t(FloatBinaryOp::kMax), ChainOperand::kConstantRight, -4},
      {"LeakyRelu", ChainStep::kActivation, int64_t(ActOp::kLeakyRelu), ChainOperand::kNone, 0, 0.1f},
      {"Clip", ChainStep::kActivation, int64_t(ActOp::kClip), ChainOperand::kNone, 0, -0.3f, 2.5f},
      {"Exp", ChainStep::kUnaryMath, int64_t(FloatUnaryOp::kExp)}};
  const int64_t n = 3001;
  const std::vector<float> x = Ramp(n);
  std::vector<float> want(n);
  for (int64_t i = 0; i < n; ++i) {
    float v = x[i] * x[i];
    v = 3.0f - v;
    v = x[i] / v;
    v = std::max(v, -4.0f);
    v = v < 0 ? 0.1f * v : v;
    v = std::min(std::max(v, -0.3f), 2.5f);
    want[i] = std::exp(v);
  }
  OpTest test = ChainTest(steps);
  test.Input(Tensor::FromVector<float>({n}, x));
  auto y = test.Run(RegisterActivationKernels);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsNear(Tensor::FromVector<float>({n}, want), y->at(0).tensor(), 1e-5, 1e-6));
}

TEST(ElementwiseChain, ConstantRankBroadcastsTheShape) {
  OpTest test = ChainTest({{"Add", ChainStep::kBinary, int64_t(FloatBinaryOp::kAdd), ChainOperand::kConstantRight, 1},
                           {"Relu", ChainStep::kActivation, int64_t(ActOp::kRelu)}},
                          3);
  test.Input(MakeTensor<float>({2}, {-3, 4}));
  auto y = test.Run(RegisterActivationKernels);
  ASSERT_TRUE(y.ok()) << y.status().ToString();
  EXPECT_TRUE(TensorsEqual(MakeTensor<float>({1, 1, 2}, {0, 5}), y->at(0).tensor()));
}

TEST(ElementwiseChain, RefusesMalformedStepsAndOtherTypes) {
  OpTest bad_operand = ChainTest({{"Relu", ChainStep::kActivation, int64_t(ActOp::kRelu), ChainOperand::kInputLeft}});
  bad_operand.Input(MakeTensor<float>({1}, {1}));
  EXPECT_TRUE(Refused(bad_operand.Run(RegisterActivationKernels), StatusCode::kInvalidArgument, "ElementwiseChain: step 0 (Relu) is malformed"));
  OpTest bad_code = ChainTest({{"Add", ChainStep::kBinary, 99, ChainOperand::kConstantRight}});
  bad_code.Input(MakeTensor<float>({1}, {1}));
  EXPECT_TRUE(Refused(bad_code.Run(RegisterActivationKernels), StatusCode::kInvalidArgument, "ElementwiseChain: step 0 (Add) is malformed"));
  OpTest doubles = ChainTest(kGelu);
  doubles.Input(MakeTensor<double>({1}, {1}));
  auto y = doubles.Run(RegisterActivationKernels);
  ASSERT_TRUE(Refused(y, StatusCode::kInvalidArgument, "ElementwiseChain: input X is float64, the chain is float only"));
  EXPECT_NE(y.status().message().find("float only"), std::string::npos) << y.status().ToString();
}

TEST(ElementwiseChain, StepsForOps) {
  const ChainAttributes defaults{[](const char*, float f) { return f; },
                                 [](const char*, const std::string& s) { return s; }};
  ChainStep step;
  ASSERT_TRUE(ChainStepFor("LeakyRelu", 16, defaults, &step));
  EXPECT_EQ(step.kind, ChainStep::kActivation);
  EXPECT_FLOAT_EQ(step.params.alpha, 0.01f);
  ASSERT_TRUE(ChainStepFor("Sub", 14, defaults, &step));
  EXPECT_EQ(step.kind, ChainStep::kBinary);
  EXPECT_FALSE(ChainStepFor("Add", 6, defaults, &step));  // legacy broadcast attributes
  EXPECT_FALSE(ChainStepFor("Gelu", 18, defaults, &step));  // no Gelu before opset 20
  EXPECT_FALSE(ChainStepFor("Pow", 15, defaults, &step));
  EXPECT_FALSE(ChainStepFor("Conv", 11, defaults, &step));
}

}  // namespace
}  // namespace onnxflow
