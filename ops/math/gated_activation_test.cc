// com.onnxflow GatedActivation against the scalar definition of each gate, on every compiled CPU
// target, over widths that leave vector tails, in float and float16; and its refusals.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ops/framework/every_target.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/math/gated_activation.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

std::vector<float> Random(int64_t n, uint32_t seed, float scale) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-scale, scale);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& x : v) x = dist(rng);
  return v;
}

// The gates' definitions, in double.
double GateScalar(const GatedActivationSpec& spec, double x) {
  switch (spec.op) {
    case ActOp::kSwish: return x / (1.0 + std::exp(-spec.alpha * x));
    case ActOp::kGelu: return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
    case ActOp::kGeluTanh: return 0.5 * x * (1.0 + std::tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
    case ActOp::kSigmoid: return 1.0 / (1.0 + std::exp(-x));
    case ActOp::kRelu: return x > 0.0 ? x : 0.0;
    default: return std::tanh(x);
  }
}

OpTest Gated(const GatedActivationSpec& spec) {
  OpTest t(internal_ops::kGatedActivation, internal_ops::kVersion, kOnnxflowDomain);
  onnx::NodeProto node;
  spec.WriteTo(node);
  for (const auto& a : node.attribute()) {
    if (a.type() == onnx::AttributeProto::STRING) t.Attr(a.name(), a.s());
    if (a.type() == onnx::AttributeProto::FLOAT) t.Attr(a.name(), a.f());
  }
  return t;
}

class GatedActivationTest : public EveryTargetTest {};

TEST_P(GatedActivationTest, EveryGateMatchesItsScalarDefinition) {
  const GatedActivationSpec specs[] = {{ActOp::kSwish, 1.0f}, {ActOp::kSwish, 1.702f}, {ActOp::kGelu},
                                       {ActOp::kGeluTanh},     {ActOp::kSigmoid},      {ActOp::kRelu},
                                       {ActOp::kTanh}};
  for (const GatedActivationSpec& spec : specs) {
    for (const int64_t f : {1, 7, 16, 33, 100}) {
      const int64_t rows = 3;
      const std::vector<float> p = Random(rows * 2 * f, static_cast<uint32_t>(f), 6.0f);
      std::vector<float> want(static_cast<size_t>(rows * f));
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < f; ++j) {
          const double g = p[r * 2 * f + j], u = p[r * 2 * f + f + j];
          want[r * f + j] = static_cast<float>(GateScalar(spec, g) * u);
        }
      }
      OpTest t = Gated(spec);
      t.Input(Tensor::FromVector<float>({rows, 2 * f}, p));
      auto out = t.Run(RegisterMathKernels);
      ASSERT_TRUE(out.ok()) << out.status().ToString();
      const Tensor& y = (*out)[0].tensor();
      ASSERT_EQ(y.shape(), (Shape{rows, f}));
      for (int64_t i = 0; i < y.size(); ++i) {
        ASSERT_NEAR(y.data<float>()[i], want[i], 2e-5 + 2e-5 * std::fabs(want[i]))
            << FindActivationOp(spec.op)->op_type << " f " << f << " at " << i;
      }
    }
  }
}

ONNXFLOW_INSTANTIATE_EVERY_TARGET(GatedActivationTest);

TEST(GatedActivationKernelTest, HalfInputsComputeInFloatAndKeepTheirRank) {
  const std::vector<float> p = Random(2 * 3 * 10, 5, 2.0f);
  std::vector<Float16> h(p.size());
  for (size_t i = 0; i < p.size(); ++i) h[i].bits = FloatToHalf(p[i]);
  OpTest t = Gated({ActOp::kGeluTanh});
  t.Input(Tensor::FromVector<Float16>({2, 3, 10}, h));
  auto out = t.Run(RegisterMathKernels);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const Tensor& y = (*out)[0].tensor();
  ASSERT_EQ(y.dtype(), DataType::kFloat16);
  ASSERT_EQ(y.shape(), (Shape{2, 3, 5}));
  for (int64_t r = 0; r < 6; ++r) {
    for (int64_t j = 0; j < 5; ++j) {
      const float g = HalfToFloat(h[r * 10 + j].bits), u = HalfToFloat(h[r * 10 + 5 + j].bits);
      const float want = static_cast<float>(GateScalar({ActOp::kGeluTanh}, g) * u);
      EXPECT_NEAR(HalfToFloat(y.data<Float16>()[r * 5 + j].bits), want, 2e-3 + 1e-3 * std::fabs(want));
    }
  }
}

TEST(GatedActivationKernelTest, RefusesAnOddWidthAndUnknownGates) {
  OpTest odd = Gated({ActOp::kSwish, 1.0f});
  odd.Input(Tensor(DataType::kFloat, {2, 5}));
  EXPECT_TRUE(Refused(odd.Run(RegisterMathKernels), StatusCode::kInvalidArgument, "must have an even last dimension"));
  OpTest unknown(internal_ops::kGatedActivation, internal_ops::kVersion, kOnnxflowDomain);
  unknown.Attr("activation", std::string("Mish"));
  unknown.Input(Tensor(DataType::kFloat, {2, 4}));
  EXPECT_FALSE(unknown.Run(RegisterMathKernels).ok());
}

TEST(GatedActivationKernelTest, SpecRoundTrips) {
  const GatedActivationSpec specs[] = {{ActOp::kSwish, 1.5f}, {ActOp::kGeluTanh}, {ActOp::kGelu}, {ActOp::kSigmoid}};
  for (const GatedActivationSpec& spec : specs) {
    onnx::NodeProto node;
    spec.WriteTo(node);
    auto parsed = GatedActivationSpec::Parse(KernelInfo(node, internal_ops::kVersion, {}, {}, {}));
    ASSERT_TRUE(parsed.ok()) << parsed.status().message();
    EXPECT_EQ(parsed->op, spec.op);
    if (spec.op == ActOp::kSwish) {
      EXPECT_EQ(parsed->alpha, spec.alpha);
    }
  }
}

}  // namespace
}  // namespace onnxflow
