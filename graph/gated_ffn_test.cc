// FuseGatedFeedForward (graph/gated_ffn.h): gated feed-forward blocks (LLaMA's SwiGLU, T5's
// gelu_new gate, GEGLU with biases, Phi-3's split product, float16 weights) become one product of
// [Wg | Wu] and GatedActivation, after the activation fusions that run before it in
// FuseForInference; near misses stay; the optimized model computes what the unoptimized one does.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/fusion.h"
#include "graph/gated_ffn.h"
#include "graph/graph_test.h"
#include "graph/half_compute.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/numeric.h"
#include "ops/math/gated_activation.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;
using Names = std::vector<std::string>;

const std::string kFused = std::string(kOnnxflowDomain) + ".";


Tensor Halves(const std::vector<int64_t>& shape, int seed) {
  const Tensor f = Floats(shape, seed);
  std::vector<Float16> h(static_cast<size_t>(f.size()));
  for (size_t i = 0; i < h.size(); ++i) h[i].bits = FloatToHalf(f.data<float>()[i]);
  return Tensor::FromVector<Float16>(shape, h);
}

constexpr int64_t kK = 8, kF = 12;

class GatedFfnTest : public GraphTest {
 protected:
  // x [2, 3, K] and, unless told otherwise, constant weights wg, wu [K, F].
  void Weights(int64_t up_width = kF) {
    model.Input("x", DataType::kFloat, {2, 3, kK});
    model.Initializer("wg", Floats({kK, kF}, 2));
    model.Initializer("wu", Floats({kK, up_width}, 3));
  }
  // LLaMA's MLP: Mul(Mul(g, Sigmoid(g)), u), g = x wg, u = x wu (the gated product first, or second
  // when `swapped`).
  void SwiGlu(bool swapped = false) {
    model.Node("MatMul", {"x", "wg"}, {"g"});
    model.Node("Sigmoid", {"g"}, {"sg"});
    model.Node("Mul", {"g", "sg"}, {"act"});
    model.Node("MatMul", {"x", "wu"}, {"u"});
    if (swapped) {
      model.Node("Mul", {"u", "act"}, {"y"});
    } else {
      model.Node("Mul", {"act", "u"}, {"y"});
    }
    model.Output("y", DataType::kFloat, {2, 3, kF});
  }
  // Runs every fusion; the GatedActivation's spec, or the test fails.
  GatedActivationSpec Fused() {
    EXPECT_TRUE(FuseForInference(&graph()).ok());
    const Node& gated = Only(internal_ops::kGatedActivation);
    Result<GatedActivationSpec> spec =
        GatedActivationSpec::Parse(KernelInfo(*gated.proto, gated.opset, {}, {}, {}));
    EXPECT_TRUE(spec.ok());
    // The product reads [wg | wu] (or the halves of one W), [K, 2F].
    const Id product = graph().nodes.Producer(gated.proto->input(0));
    EXPECT_NE(product, NodeGraph::None());
    if (product != NodeGraph::None()) {
      const Tensor& w = graph().constants.at(graph().nodes[product].proto->input(1));
      EXPECT_EQ(w.shape(), (Shape{kK, 2 * kF}));
    }
    return spec.ok() ? *spec : GatedActivationSpec{};
  }
  bool NoGated() {
    EXPECT_TRUE(FuseForInference(&graph()).ok());
    for (const std::string& op : Ops()) {
      if (op == kFused + internal_ops::kGatedActivation) return false;
    }
    return true;
  }
  NamedValue X() { return {"x", Floats({2, 3, kK}, 5)}; }
};

TEST_F(GatedFfnTest, SwiGluBecomesOneProductAndAGate) {
  Weights();
  SwiGlu();
  EXPECT_EQ(Fused().op, ActOp::kSwish);
  EXPECT_EQ(Ops(), (Names{kFused + "FusedMatMul", kFused + "GatedActivation"}));
  ExpectSameOutputs({X()}, 1e-4);
}

TEST_F(GatedFfnTest, MulOperandsSwappedFuseToo) {
  Weights();
  SwiGlu(/*swapped=*/true);
  EXPECT_EQ(Fused().op, ActOp::kSwish);
  ExpectSameOutputs({X()}, 1e-4);
}

// T5 v1.1's gelu_new gate, written out as the export writes it (FuseGeluTanh makes it FastGelu
// first).
TEST_F(GatedFfnTest, T5GeluNewGateFuses) {
  Weights();
  for (const auto& [name, value] : std::vector<std::pair<const char*, float>>{
           {"three", 3.0f}, {"cubic", 0.044715f}, {"root", 0.7978845608f}, {"one", 1.0f}, {"half", 0.5f}}) {
    model.Initializer(name, Tensor::Scalar<float>(value));
  }
  model.Node("MatMul", {"x", "wg"}, {"h"});
  model.Node("Pow", {"h", "three"}, {"h3"});
  model.Node("Mul", {"cubic", "h3"}, {"c"});
  model.Node("Add", {"h", "c"}, {"inner"});
  model.Node("Mul", {"root", "inner"}, {"scaled"});
  model.Node("Tanh", {"scaled"}, {"t"});
  model.Node("Add", {"one", "t"}, {"t1"});
  model.Node("Mul", {"half", "h"}, {"hh"});
  model.Node("Mul", {"hh", "t1"}, {"gelu"});
  model.Node("MatMul", {"x", "wu"}, {"u"});
  model.Node("Mul", {"gelu", "u"}, {"y"});
  model.Output("y", DataType::kFloat, {2, 3, kF});
  EXPECT_EQ(Fused().op, ActOp::kGeluTanh);
  EXPECT_EQ(Ops(), (Names{"MatMul", kFused + "GatedActivation"}));
  ExpectSameOutputs({X()}, 1e-4);
}

// GEGLU with the erf GELU and a bias on the gate only: the up product's part of the merged bias is
// zeros.
TEST_F(GatedFfnTest, GegluWithOneBiasFuses) {
  Weights();
  model.Initializer("bg", Floats({kF}, 7));
  for (const auto& [name, value] : std::vector<std::pair<const char*, float>>{
           {"sqrt2", 1.4142135f}, {"one", 1.0f}, {"half", 0.5f}}) {
    model.Initializer(name, Tensor::Scalar<float>(value));
  }
  model.Node("MatMul", {"x", "wg"}, {"p"});
  model.Node("Add", {"p", "bg"}, {"h"});
  model.Node("Div", {"h", "sqrt2"}, {"hd"});
  model.Node("Erf", {"hd"}, {"e"});
  model.Node("Add", {"e", "one"}, {"e1"});
  model.Node("Mul", {"h", "e1"}, {"he"});
  model.Node("Mul", {"he", "half"}, {"gelu"});
  model.Node("MatMul", {"x", "wu"}, {"u"});
  model.Node("Mul", {"u", "gelu"}, {"y"});
  model.Output("y", DataType::kFloat, {2, 3, kF});
  EXPECT_EQ(Fused().op, ActOp::kGelu);
  const Node& product = Only(internal_ops::kFusedMatMul);
  ASSERT_EQ(product.proto->input_size(), 3);
  const Tensor& bias = graph().constants.at(product.proto->input(2));
  ASSERT_EQ(bias.size(), 2 * kF);
  EXPECT_EQ(bias.data<float>()[0], Floats({kF}, 7).data<float>()[0]);
  EXPECT_EQ(bias.data<float>()[kF], 0.0f);
  ExpectSameOutputs({X()}, 1e-4);
}

// Phi-3: one product x [Wg | Wu] split in two halves, SiLU written out on the first.
class Phi3Test : public GatedFfnTest {
 protected:
  void Build(const std::vector<int64_t>& parts, bool slices = false) {
    model.Input("x", DataType::kFloat, {2, 3, kK});
    model.Initializer("w", Floats({kK, 2 * kF}, 4));
    model.Node("MatMul", {"x", "w"}, {"p"});
    if (slices) {
      model.Initializer("zero", Tensor::FromVector<int64_t>({1}, {0}));
      model.Initializer("f", Tensor::FromVector<int64_t>({1}, {parts[0]}));
      model.Initializer("end", Tensor::FromVector<int64_t>({1}, {INT64_MAX}));
      model.Initializer("last", Tensor::FromVector<int64_t>({1}, {-1}));
      model.Node("Slice", {"p", "zero", "f", "last"}, {"gate"});
      model.Node("Slice", {"p", "f", "end", "last"}, {"up"});
    } else {
      model.Initializer("parts", Tensor::FromVector<int64_t>({2}, parts));
      SetAttr(model.Node("Split", {"p", "parts"}, {"gate", "up"}), "axis", int64_t{-1});
    }
    model.Node("Sigmoid", {"gate"}, {"sg"});
    model.Node("Mul", {"sg", "gate"}, {"act"});
    model.Node("Mul", {"up", "act"}, {"y"});
    model.Output("y", DataType::kFloat, {2, 3, parts[1]});
  }
};

TEST_F(Phi3Test, SplitHalvesFuse) {
  Build({kF, kF});
  EXPECT_EQ(Fused().op, ActOp::kSwish);
  EXPECT_EQ(Ops(), (Names{"MatMul", kFused + "GatedActivation"}));
  ExpectSameOutputs({X()}, 1e-4);
}

TEST_F(Phi3Test, SlicedHalvesFuse) {
  Build({kF, kF}, /*slices=*/true);
  EXPECT_EQ(Fused().op, ActOp::kSwish);
  ExpectSameOutputs({X()}, 1e-4);
}

TEST_F(Phi3Test, UnequalSplitStays) {
  Build({kF - 4, kF + 4});
  // The gate's 8 columns and the up's 16 do not broadcast: the shapes say so, the rule must too.
  // (Run only the rule: the model itself would fail to run.)
  EXPECT_EQ(Run("FuseGatedFeedForward", FuseGatedFeedForward), 0);
}

// A half model after ComputeHalfInFloat: the merged weights stay 16-bit.
TEST_F(GatedFfnTest, HalfWeightsStayHalf) {
  model.Input("x", DataType::kFloat16, {2, 3, kK});
  model.Initializer("wg", Halves({kK, kF}, 2));
  model.Initializer("wu", Halves({kK, kF}, 3));
  model.Node("MatMul", {"x", "wg"}, {"g"});
  model.Node("Sigmoid", {"g"}, {"sg"});
  model.Node("Mul", {"g", "sg"}, {"act"});
  model.Node("MatMul", {"x", "wu"}, {"u"});
  model.Node("Mul", {"act", "u"}, {"y"});
  model.Output("y", DataType::kFloat16, {2, 3, kF});
  ASSERT_TRUE(ComputeHalfInFloat(&graph(), 17).ok());
  EXPECT_EQ(Fused().op, ActOp::kSwish);
  const Node& gated = Only(internal_ops::kGatedActivation);
  const Node& product = graph().nodes[graph().nodes.Producer(gated.proto->input(0))];
  EXPECT_EQ(graph().constants.at(product.proto->input(1)).dtype(), DataType::kFloat16);
  ExpectSameOutputs({{"x", Halves({2, 3, kK}, 5)}}, 1e-2);
}

// Near misses.

TEST_F(GatedFfnTest, GateReadElsewhereStays) {
  Weights();
  SwiGlu();
  model.Output("g", DataType::kFloat, {2, 3, kF});  // the gate's product is also an output
  EXPECT_TRUE(NoGated());
  ExpectSameOutputs({X()}, 1e-4);
}

TEST_F(GatedFfnTest, ActivationReadElsewhereStays) {
  Weights();
  SwiGlu();
  model.Output("act", DataType::kFloat, {2, 3, kF});  // the gate's activation is also an output
  EXPECT_TRUE(NoGated());
  ExpectSameOutputs({X()}, 1e-4);
}

TEST_F(GatedFfnTest, UpReadElsewhereStays) {
  Weights();
  SwiGlu();
  model.Node("Relu", {"u"}, {"ru"});
  model.Output("ru", DataType::kFloat, {2, 3, kF});
  EXPECT_TRUE(NoGated());
}

TEST_F(GatedFfnTest, DifferentInputsStay) {
  Weights();
  model.Input("z", DataType::kFloat, {2, 3, kK});
  model.Node("MatMul", {"x", "wg"}, {"g"});
  model.Node("Sigmoid", {"g"}, {"sg"});
  model.Node("Mul", {"g", "sg"}, {"act"});
  model.Node("MatMul", {"z", "wu"}, {"u"});
  model.Node("Mul", {"act", "u"}, {"y"});
  model.Output("y", DataType::kFloat, {2, 3, kF});
  EXPECT_TRUE(NoGated());
}

TEST_F(GatedFfnTest, RunTimeWeightsStay) {
  model.Input("x", DataType::kFloat, {2, 3, kK});
  model.Initializer("wg", Floats({kK, kF}, 2));
  model.Input("wu", DataType::kFloat, {kK, kF});  // a graph input: not a constant
  SwiGlu();
  EXPECT_TRUE(NoGated());
}

// The up product of one column broadcasts over the gate's F: not a gated block of one F.
TEST_F(GatedFfnTest, MismatchedWidthStays) {
  Weights(/*up_width=*/1);
  SwiGlu();
  EXPECT_TRUE(NoGated());
  ExpectSameOutputs({X()}, 1e-4);
}

// Both operands activated (no plain up product): nothing to merge.
TEST_F(GatedFfnTest, TwoGatesStay) {
  Weights();
  model.Node("MatMul", {"x", "wg"}, {"g"});
  model.Node("Sigmoid", {"g"}, {"sg"});
  model.Node("MatMul", {"x", "wu"}, {"u"});
  model.Node("Sigmoid", {"u"}, {"su"});
  model.Node("Mul", {"sg", "su"}, {"y"});
  model.Output("y", DataType::kFloat, {2, 3, kF});
  EXPECT_TRUE(NoGated());
}

}  // namespace
}  // namespace onnxflow::graph
