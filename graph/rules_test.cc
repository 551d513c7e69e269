// A GraphTest (graph/graph_test.h) per rewrite rule: the rule fires on its pattern, the nodes
// that result are the ones it promises, a near miss stays as it was, and the optimized model
// computes what the unoptimized one does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "graph/attention_fusion.h"
#include "graph/blocked_layout.h"
#include "graph/chain_fusion.h"
#include "graph/dynamic_quant_fusion.h"
#include "graph/fusion.h"
#include "graph/fusion_util.h"
#include "graph/graph_test.h"
#include "graph/half_compute.h"
#include "graph/hard_activation_fusion.h"
#include "graph/norm_fusion.h"
#include "graph/ort_saved_forms.h"
#include "graph/outer_scope.h"
#include "graph/passes.h"
#include "graph/qdq_fusion.h"
#include "graph/quant_layout.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/node_attributes.h"
#include "ops/framework/numeric.h"
#include "ops/register_all.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;
using Names = std::vector<std::string>;


NamedValue Input(const std::string& name, const std::vector<int64_t>& shape, int seed = 1) {
  return {name, Floats(shape, seed)};
}

// Floats(shape, seed) rounded to float16.
Tensor Halves(const std::vector<int64_t>& shape, int seed) {
  const Tensor f = Floats(shape, seed);
  std::vector<Float16> h(static_cast<size_t>(f.size()));
  for (size_t i = 0; i < h.size(); ++i) h[i].bits = FloatToHalf(f.data<float>()[i]);
  return Tensor::FromVector<Float16>(shape, h);
}

class RulesTest : public GraphTest {
 protected:
  // A merged decoder's step: every node built so far moves into the then branch of an If on
  // input "c" (the main graph keeps its inputs); the else branch passes q and the caches through;
  // the If writes the main graph's outputs out_y, out_present_k and out_present_v.
  void IntoCacheBranch() {
    onnx::GraphProto& main = *model.proto().mutable_graph();
    onnx::NodeProto branch_if;
    branch_if.set_op_type("If");
    branch_if.set_name("use_cache_branch");
    branch_if.add_input("c");
    onnx::AttributeProto* then_attr = branch_if.add_attribute();
    then_attr->set_name("then_branch");
    then_attr->set_type(onnx::AttributeProto::GRAPH);
    onnx::GraphProto* then_graph = then_attr->mutable_g();
    then_graph->set_name("with_past");
    *then_graph->mutable_node() = main.node();
    *then_graph->mutable_output() = main.output();
    main.clear_node();
    main.clear_output();
    tools::GraphBuilder else_branch = tools::SetGraphAttr(branch_if, "else_branch");
    for (const char* name : {"q", "past_k", "past_v"}) else_branch.Node("Identity", {name}, {std::string("e_") + name});
    else_branch.Output("e_q", DataType::kFloat, {1, 1, 2, 8});
    else_branch.Output("e_past_k", DataType::kFloat, {1, 2, 3, 8});
    else_branch.Output("e_past_v", DataType::kFloat, {1, 2, 3, 8});
    for (const char* name : {"out_y", "out_present_k", "out_present_v"}) branch_if.add_output(name);
    *main.add_node() = branch_if;
    model.Output("out_y", DataType::kFloat, {1, 1, 2, 8});
    model.Output("out_present_k", DataType::kFloat, {1, 2, -1, 8});
    model.Output("out_present_v", DataType::kFloat, {1, 2, -1, 8});
  }
  // A decoder step's heads: q, k, v (B, S, N, D) into heads, k and v after past_k and past_v as
  // present_k and present_v (the key-value caches, axis 2 or -2).
  void HeadsAfterCaches(int64_t k_axis, int64_t v_axis) {
    for (const char* x : {"q", "k", "v"}) {
      SetAttr(model.Node("Transpose", {x}, {std::string(x) + "h"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    }
    SetAttr(model.Node("Concat", {"past_k", "kh"}, {"present_k"}), "axis", k_axis);
    SetAttr(model.Node("Concat", {"past_v", "vh"}, {"present_v"}), "axis", v_axis);
  }
  // "scaled" = `scale_op`(q K^T, "scale") with K^T the transposed `keys`.
  void ScaledScores(const std::string& q, const std::string& keys, const char* scale_op) {
    SetAttr(model.Node("Transpose", {keys}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
    model.Node("MatMul", {q, "kt"}, {"scores"});
    model.Node(scale_op, {"scores", "scale"}, {"scaled"});
  }
  // y = Transpose(Softmax(logits) values) back to (B, S, N, D), and the caches as outputs.
  void ProbabilitiesTimes(const std::string& logits, const std::string& values, const std::vector<int64_t>& y,
                          const std::vector<int64_t>& present, DataType type = DataType::kFloat) {
    SetAttr(model.Node("Softmax", {logits}, {"probs"}), "axis", int64_t{-1});
    model.Node("MatMul", {"probs", values}, {"ctx"});
    SetAttr(model.Node("Transpose", {"ctx"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    model.Output("y", type, y);
    model.Output("present_k", type, present);
    model.Output("present_v", type, present);
  }

  // x [1, 4, 6, 6] -> Conv (w [16, 4, 3, 3], pads 1) -> "c".
  void ConvFromX(int channels = 16) {
    model.Input("x", DataType::kFloat, {1, 4, 6, 6});
    model.Initializer("w", Floats({channels, 4, 3, 3}, 2));
    model.Initializer("b", Floats({channels}, 3));
    SetAttr(model.Node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  }
};

// An If whose branches read the main graph's weights (a merged decoder's form), one of them
// through a nested If: the branches get the weights as constants of their own, the nested branch
// from its parent branch, and the declarations of the main graph's inputs they read; an initializer that is also a graph input, and the graph input x, stay
// outer values; the If no longer reads the weights, and the optimized model (whose branches now
// fuse the MatMul and its bias) computes what the unoptimized one does.
TEST_F(RulesTest, InheritOuterScopeGivesBranchesTheWeights) {
  model.Input("x", DataType::kFloat, {2, 4});
  model.Input("c", DataType::kBool, {});
  model.Input("shift", DataType::kFloat, {3});
  model.Initializer("w", Floats({4, 3}, 2));
  model.Initializer("bias", Floats({3}, 3));
  model.Initializer("shift", Floats({3}, 4));  // overridable: stays an outer value
  auto& branch = model.Node("If", {"c"}, {"y"}, "if");
  tools::GraphBuilder then_branch = tools::SetGraphAttr(branch, "then_branch");
  then_branch.Node("MatMul", {"x", "w"}, {"t_mm"});
  then_branch.Node("Add", {"t_mm", "bias"}, {"t_y"});
  then_branch.Output("t_y", DataType::kFloat, {2, 3});
  tools::GraphBuilder else_branch = tools::SetGraphAttr(branch, "else_branch");
  auto& nested = else_branch.Node("If", {"c"}, {"e_y"}, "nested");
  tools::GraphBuilder inner_then = tools::SetGraphAttr(nested, "then_branch");
  inner_then.Node("MatMul", {"x", "w"}, {"i_mm"});
  inner_then.Node("Add", {"i_mm", "shift"}, {"i_y"});
  inner_then.Output("i_y", DataType::kFloat, {2, 3});
  tools::GraphBuilder inner_else = tools::SetGraphAttr(nested, "else_branch");
  inner_else.Node("Neg", {"bias"}, {"n_b"});
  inner_else.Node("Expand", {"n_b", "two_by_three"}, {"n_y"});
  inner_else.Output("n_y", DataType::kFloat, {2, 3});
  model.Initializer("two_by_three", Tensor::FromVector<int64_t>({2}, {2, 3}));
  else_branch.Output("e_y", DataType::kFloat, {2, 3});
  model.Output("y", DataType::kFloat, {2, 3});

  Graph& g = graph();
  InheritOuterScope(&g);
  const Node& top_if = Only("If");
  const Graph& then_graph = *top_if.subgraphs.at("then_branch");
  const Graph& else_graph = *top_if.subgraphs.at("else_branch");
  EXPECT_TRUE(then_graph.constants.count("w") && then_graph.constants.count("bias"));
  EXPECT_EQ(then_graph.outer_names, (std::set<std::string>{"x"}));
  EXPECT_EQ(then_graph.constants.at("w").storage(), g.constants.at("w").storage()) << "shared, not copied";
  // The main graph's inputs as declared there, for the branches' passes (a decoder's caches).
  ASSERT_TRUE(then_graph.outer_inputs.count("x"));
  EXPECT_EQ(then_graph.outer_inputs.at("x").shape, (std::vector<int64_t>{2, 4}));
  EXPECT_TRUE(else_graph.outer_inputs.count("c") && else_graph.outer_inputs.count("x"));
  const Node& inner = *else_graph.nodes.begin();
  ASSERT_EQ(inner.op_type(), "If");
  const Graph& inner_then_graph = *inner.subgraphs.at("then_branch");
  EXPECT_TRUE(inner_then_graph.constants.count("w"));
  EXPECT_EQ(inner_then_graph.outer_names, (std::set<std::string>{"shift", "x"}));
  EXPECT_TRUE(inner.subgraphs.at("else_branch")->constants.count("two_by_three"));
  EXPECT_EQ(inner.implicit_inputs, (Names{"shift", "x"}));
  EXPECT_EQ(top_if.implicit_inputs, (Names{"c", "shift", "x"}));  // the nested If reads c
  EXPECT_EQ(g.nodes.ReadCount("w"), 0);
  for (bool c : {true, false}) {
    ExpectSameOutputs({Input("x", {2, 4}), {"c", Tensor::Scalar<bool>(c)}, Input("shift", {3}, 5)});
  }
}

TEST_F(RulesTest, RemovePassThroughRenamesTheProducersOutput) {
  model.Input("x", DataType::kFloat, {4});
  model.Node("Relu", {"x"}, {"r"});
  model.Node("Identity", {"r"}, {"i"});
  model.Node("Dropout", {"i"}, {"y"});
  model.Output("y", DataType::kFloat, {4});
  EXPECT_EQ(Run("RemovePassThrough", RemovePassThrough), 2);
  EXPECT_EQ(Ops(), (Names{"Relu"}));
  EXPECT_EQ(Only("Relu").proto->output(0), "y");  // the graph output keeps its name
  ExpectSameOutputs({Input("x", {4})});
}

TEST_F(RulesTest, RemovePassThroughKeepsADropoutWhoseMaskIsRead) {
  model.Input("x", DataType::kFloat, {4});
  model.Node("Relu", {"x"}, {"r"});
  model.Node("Dropout", {"r"}, {"y", "mask"});
  model.Output("y", DataType::kFloat, {4});
  model.Output("mask", DataType::kBool, {4});
  EXPECT_EQ(Run("RemovePassThrough", RemovePassThrough), 0);
  EXPECT_EQ(Ops(), (Names{"Relu", "Dropout"}));
}

// A Cast of a graph input to its own type (a float16 model with float inputs, once computed in
// float) and an Identity of one: their readers read the input itself, twice in one node too.
TEST_F(RulesTest, RemovePassThroughOfAGraphInput) {
  model.Input("x", DataType::kFloat, {4});
  SetAttr(model.Node("Cast", {"x"}, {"c"}), "to", int64_t{onnx::TensorProto::FLOAT});
  model.Node("Add", {"c", "c"}, {"y"});
  model.Node("Identity", {"x"}, {"i"});
  model.Node("Relu", {"i"}, {"z"});
  model.Output("y", DataType::kFloat, {4});
  model.Output("z", DataType::kFloat, {4});
  EXPECT_EQ(Run("RemovePassThrough", RemovePassThrough), 2);
  EXPECT_EQ(Ops(), (Names{"Add", "Relu"}));
  EXPECT_EQ(Only("Add").proto->input(0), "x");
  EXPECT_EQ(Only("Add").proto->input(1), "x");
  EXPECT_EQ(Only("Relu").proto->input(0), "x");
  ExpectSameOutputs({Input("x", {4})});
}

// A Cast to its input's own type of a value other nodes read too (ONNX Runtime's float16 CNN, a
// convolution's output read by the next convolution and, through a Cast to half, by a Concat):
// its readers read the value itself.
TEST_F(RulesTest, RemovePassThroughOfAValueReadByOthersToo) {
  model.Input("x", DataType::kFloat, {4});
  model.Node("Relu", {"x"}, {"r"});
  model.Node("Neg", {"r"}, {"n"});
  SetAttr(model.Node("Cast", {"r"}, {"c"}), "to", int64_t{onnx::TensorProto::FLOAT});
  model.Node("Add", {"c", "n"}, {"y"});
  model.Output("y", DataType::kFloat, {4});
  EXPECT_EQ(Run("RemovePassThrough", RemovePassThrough), 1);
  EXPECT_EQ(Ops(), (Names{"Relu", "Neg", "Add"}));
  EXPECT_EQ(Only("Add").proto->input(0), "r");
  ExpectSameOutputs({Input("x", {4})});
}

// Near misses: the pass-through's output is a graph output (it must exist under its name), a
// subgraph reads it (captured by name), or the Cast converts.
TEST_F(RulesTest, RemovePassThroughOfAGraphInputKeepsWhatMustStay) {
  model.Input("x", DataType::kFloat, {4});
  model.Input("b", DataType::kBool, {});
  model.Node("Identity", {"x"}, {"out"});
  model.Output("out", DataType::kFloat, {4});
  SetAttr(model.Node("Cast", {"x"}, {"h"}), "to", int64_t{onnx::TensorProto::FLOAT16});
  model.Output("h", DataType::kFloat16, {4});
  model.Node("Identity", {"x"}, {"captured"});
  auto& branch = model.Node("If", {"b"}, {"y"}, "if");
  tools::GraphBuilder then_branch = tools::SetGraphAttr(branch, "then_branch");
  then_branch.Node("Relu", {"captured"}, {"t"});
  then_branch.Output("t", DataType::kFloat, {4});
  tools::GraphBuilder else_branch = tools::SetGraphAttr(branch, "else_branch");
  else_branch.Node("Neg", {"captured"}, {"e"});
  else_branch.Output("e", DataType::kFloat, {4});
  model.Output("y", DataType::kFloat, {4});
  EXPECT_EQ(Run("RemovePassThrough", RemovePassThrough), 0);
  EXPECT_EQ(Ops(), (Names{"Identity", "Cast", "Identity", "If"}));
}

TEST_F(RulesTest, FoldBatchNormIntoConvWeights) {
  ConvFromX();
  for (const char* p : {"scale", "bias", "mean"}) model.Initializer(p, Floats({16}, 5));
  Tensor var = Floats({16}, 6);
  for (int64_t i = 0; i < 16; ++i) var.mutable_data<float>()[i] = 1.5f + var.data<float>()[i];
  model.Initializer("var", var);
  model.Node("BatchNormalization", {"c", "scale", "bias", "mean", "var"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("FoldBatchNorm", FoldBatchNorm), 1);
  EXPECT_EQ(Ops(), (Names{"Conv"}));
  EXPECT_EQ(Only("Conv").proto->input(1), "y/folded_weight");
  EXPECT_EQ(graph().constants.at("y/folded_bias").size(), 16);
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

TEST_F(RulesTest, FoldChannelAffineMulAndAdd) {
  ConvFromX();
  model.Initializer("s", Floats({1, 16, 1, 1}, 7));
  model.Initializer("t", Floats({16, 1, 1}, 8));
  model.Node("Mul", {"c", "s"}, {"m"});
  model.Node("Add", {"t", "m"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("FoldChannelAffine", FoldChannelAffine), 2);
  EXPECT_EQ(Ops(), (Names{"Conv"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

TEST_F(RulesTest, FoldChannelAffineLeavesAConstantThatIsNotPerChannel) {
  ConvFromX();
  model.Initializer("s", Floats({1, 16, 6, 6}, 7));
  model.Node("Mul", {"c", "s"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("FoldChannelAffine", FoldChannelAffine), 0);
}

TEST_F(RulesTest, FuseMatMulBiasTakesAVectorBias) {
  model.Input("x", DataType::kFloat, {3, 8});
  model.Initializer("w", Floats({8, 5}, 1));
  model.Initializer("b", Floats({5}, 2));
  model.Node("MatMul", {"x", "w"}, {"p"});
  model.Node("Add", {"b", "p"}, {"y"});
  model.Output("y", DataType::kFloat, {3, 5});
  EXPECT_EQ(Run("FuseMatMulBias", FuseMatMulBias), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".FusedMatMul"}));
  ExpectSameOutputs({Input("x", {3, 8})});
}

// A half model's linear layer after ComputeHalfInFloat: the bias widened to float, the weights kept
// in 16 bits (the GEMM widens them as it reads them). Its BERT ran every bias Add and GELU as
// passes of their own while the float model's were in the GEMM's epilogue.
TEST_F(RulesTest, FuseMatMulBiasTakesHalfWeights) {
  model.Input("x", DataType::kFloat16, {3, 8});
  model.Initializer("w", Halves({8, 5}, 1));
  model.Initializer("b", Halves({5}, 2));
  model.Node("MatMul", {"x", "w"}, {"p"});
  model.Node("Add", {"p", "b"}, {"y"});
  model.Output("y", DataType::kFloat16, {3, 5});
  ASSERT_TRUE(ComputeHalfInFloat(&graph(), 17).ok());
  EXPECT_EQ(Run("FuseMatMulBias", FuseMatMulBias), 1);
  const Node& fused = Only(internal_ops::kFusedMatMul);
  EXPECT_EQ(graph().constants.at(fused.proto->input(1)).dtype(), DataType::kFloat16);
  ExpectSameOutputs({{"x", Halves({3, 8}, 3)}}, 1e-2);
}

TEST_F(RulesTest, FuseResidualAddsTheOtherOperandInTheEpilogue) {
  ConvFromX();
  model.Input("z", DataType::kFloat, {1, 16, 6, 6});
  model.Node("Add", {"z", "c"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("FuseResidual", FuseResidual), 1);
  const Node& fused = Only(internal_ops::kFusedConv);
  EXPECT_EQ(fused.proto->input(3), "z");
  ExpectSameOutputs({Input("x", {1, 4, 6, 6}), Input("z", {1, 16, 6, 6}, 4)}, 1e-4);
}

// The residual's other operand computed after the convolution in the file: the fused node waits
// for it (the IR orders the nodes by their edges, whatever their place).
TEST_F(RulesTest, FuseResidualWithALaterOperandStaysInOrder) {
  ConvFromX();
  model.Node("Sigmoid", {"x"}, {"sx"});
  model.Initializer("w2", Floats({16, 4, 1, 1}, 9));
  model.Node("Conv", {"sx", "w2"}, {"z"}, "late");
  model.Node("Relu", {"z"}, {"rz"});
  model.Node("Add", {"c", "rz"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("FuseResidual", FuseResidual), 1);
  EXPECT_EQ(Ops(), (Names{"Sigmoid", "Conv", "Relu", std::string(kOnnxflowDomain) + ".FusedConv"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

TEST_F(RulesTest, FuseSwishAfterAConv) {
  ConvFromX();
  model.Node("Sigmoid", {"c"}, {"s"});
  model.Node("Mul", {"s", "c"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("FuseSwish", FuseSwish), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".FusedConv"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

// MobileNetV3's hard activations written out after a Conv: Paddle's (x * Clip(x + 3, 0, 6)) / 6,
// PyTorch's x * (Clip(x + 3, 0, 6) / 6) and Keras' Clip(0.2 x + 0.5, 0, 1) become HardSwish and
// HardSigmoid, which FuseActivation then gives the Conv as its epilogue.
class HardActivationTest : public RulesTest {
 protected:
  void SetUp() override {
    ConvFromX();
    model.Initializer("three", Tensor::Scalar<float>(3.0f));
    model.Initializer("zero", Tensor::Scalar<float>(0.0f));
    model.Initializer("six", Tensor::Scalar<float>(6.0f));
    model.Initializer("sixth", Tensor::Scalar<float>(1.0f / 6.0f));
    model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  }
  // Clip(Add(c, three), 0, 6) -> "r6".
  void Relu6OfShift(const std::string& x = "c") {
    model.Node("Add", {x, "three"}, {"s"});
    model.Node("Clip", {"s", "zero", "six"}, {"r6"});
  }
  int Fuse() { return Run("FuseHardSigmoid", FuseHardSigmoid) + Run("FuseHardSwish", FuseHardSwish); }
};

TEST_F(HardActivationTest, ProductThenDivisionIsHardSwish) {
  Relu6OfShift();
  model.Node("Mul", {"c", "r6"}, {"m"});
  model.Node("Div", {"m", "six"}, {"y"});
  EXPECT_EQ(Fuse(), 1);
  EXPECT_EQ(Ops(), (Names{"Conv", "HardSwish"}));
  EXPECT_EQ(Run("FuseActivation", FuseActivation), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".FusedConv"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-5);
}

TEST_F(HardActivationTest, DivisionThenProductIsHardSwish) {
  Relu6OfShift();
  model.Node("Mul", {"r6", "sixth"}, {"h"});  // the division as a Mul by 1/6
  model.Node("Mul", {"h", "c"}, {"y"});
  EXPECT_EQ(Fuse(), 2);  // HardSigmoid, then x * HardSigmoid(x)
  EXPECT_EQ(Ops(), (Names{"Conv", "HardSwish"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-5);
}

TEST_F(HardActivationTest, ScaledShiftedClipIsHardSigmoid) {
  model.Initializer("fifth", Tensor::Scalar<float>(0.2f));
  model.Initializer("half", Tensor::Scalar<float>(0.5f));
  model.Initializer("one", Tensor::Scalar<float>(1.0f));
  model.Node("Mul", {"c", "fifth"}, {"a"});
  model.Node("Add", {"half", "a"}, {"s"});
  model.Node("Clip", {"s", "zero", "one"}, {"y"});
  EXPECT_EQ(Fuse(), 1);
  const Node& h = Only("HardSigmoid");
  EXPECT_FLOAT_EQ(Attr(*h.proto, "alpha")->f(), 0.2f);
  EXPECT_FLOAT_EQ(Attr(*h.proto, "beta")->f(), 0.5f);
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-5);
}

// Near misses stay: a division by another number, and a product with another value than the one
// shifted.
TEST_F(HardActivationTest, NearMissesStay) {
  model.Input("z", DataType::kFloat, {1, 16, 6, 6});
  model.Initializer("five", Tensor::Scalar<float>(5.0f));
  Relu6OfShift();
  model.Node("Mul", {"z", "r6"}, {"m"});
  model.Node("Div", {"m", "six"}, {"y"});
  model.Node("Add", {"c", "three"}, {"s2"});
  model.Node("Clip", {"s2", "zero", "six"}, {"r2"});
  model.Node("Div", {"r2", "five"}, {"y2"});
  model.Output("y2", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Fuse(), 0);
}

TEST_F(RulesTest, FuseGeluWrittenOut) {
  model.Input("x", DataType::kFloat, {2, 8});
  model.Initializer("w", Floats({8, 8}, 1));
  model.Initializer("sqrt2", Tensor::Scalar<float>(1.4142135f));
  model.Initializer("one", Tensor::Scalar<float>(1.0f));
  model.Initializer("half", Tensor::Scalar<float>(0.5f));
  model.Node("MatMul", {"x", "w"}, {"h"});
  model.Node("Div", {"h", "sqrt2"}, {"d"});
  model.Node("Erf", {"d"}, {"e"});
  model.Node("Add", {"e", "one"}, {"a"});
  model.Node("Mul", {"h", "a"}, {"ha"});
  model.Node("Mul", {"ha", "half"}, {"y"});
  model.Output("y", DataType::kFloat, {2, 8});
  EXPECT_EQ(Run("FuseGelu", FuseGelu), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".FusedMatMul"}));
  ExpectSameOutputs({Input("x", {2, 8})}, 1e-4);
}

TEST_F(RulesTest, FuseBiasGeluIntoTheMatMul) {
  model.Input("x", DataType::kFloat, {2, 8});
  model.Initializer("w", Floats({8, 6}, 1));
  model.Initializer("b", Floats({6}, 2));
  model.Node("MatMul", {"x", "w"}, {"p"});
  model.Node("BiasGelu", {"p", "b"}, {"y"}).set_domain(kMsDomain);
  model.Output("y", DataType::kFloat, {2, 6});
  model.proto().add_opset_import()->set_domain(kMsDomain);
  model.proto().mutable_opset_import(1)->set_version(1);
  EXPECT_EQ(Run("FuseBiasGelu", FuseBiasGelu), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".FusedMatMul"}));
  ExpectSameOutputs({Input("x", {2, 8})}, 1e-4);
}

TEST_F(RulesTest, FuseActivationOnlyWhenTheProductHasNoOtherReader) {
  ConvFromX();
  model.Node("Relu", {"c"}, {"y"});
  model.Node("Tanh", {"c"}, {"t"});  // a second reader: the product must stay
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  model.Output("t", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("FuseActivation", FuseActivation), 0);
  EXPECT_EQ(Ops(), (Names{"Conv", "Relu", "Tanh"}));
}

TEST_F(RulesTest, FuseActivationLeakyReluKeepsItsAlpha) {
  ConvFromX();
  SetAttr(model.Node("LeakyRelu", {"c"}, {"y"}), "alpha", 0.3f);
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("FuseActivation", FuseActivation), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".FusedConv"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

// ONNX Runtime saves SiLU after a Conv as com.microsoft QuickGelu with alpha 1: the Conv's Swish
// epilogue. CLIP's alpha 1.702 is not x * sigmoid(x) and keeps its op.
class QuickGeluRulesTest : public RulesTest {
 protected:
  void ConvThenQuickGelu(float alpha) {
    ConvFromX();
    auto& gelu = model.Node("QuickGelu", {"c"}, {"y"});
    gelu.set_domain(kMsDomain);
    SetAttr(gelu, "alpha", alpha);
    model.Output("y", DataType::kFloat, {1, 16, 6, 6});
    model.proto().add_opset_import()->set_domain(kMsDomain);
    model.proto().mutable_opset_import(1)->set_version(1);
  }
};

TEST_F(QuickGeluRulesTest, AlphaOneIsTheConvsSwishEpilogue) {
  ConvThenQuickGelu(1.0f);
  EXPECT_EQ(Run("FuseActivation", FuseActivation), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".FusedConv"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

TEST_F(QuickGeluRulesTest, ClipsAlphaStays) {
  ConvThenQuickGelu(1.702f);
  EXPECT_EQ(Run("FuseActivation", FuseActivation), 0);
  EXPECT_EQ(Ops(), (Names{"Conv", std::string(kMsDomain) + ".QuickGelu"}));
}

TEST_F(RulesTest, FuseElementwiseChainTakesTheWholeChainAtOnce) {
  model.Input("x", DataType::kFloat, {5});
  model.Initializer("two", Tensor::Scalar<float>(2.0f));
  model.Node("Relu", {"x"}, {"a"});
  model.Node("Mul", {"a", "two"}, {"b"});
  model.Node("Sub", {"b", "x"}, {"c"});  // reads the chain's input again
  model.Node("Tanh", {"c"}, {"y"});
  model.Output("y", DataType::kFloat, {5});
  EXPECT_EQ(Run("FuseElementwiseChain", FuseElementwiseChain), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".ElementwiseChain"}));
  // The chain reads x once: the IR counts its reads, not the pass.
  EXPECT_EQ(graph().nodes.ReadCount("x"), 1);
  // Its messages name the nodes of the file it replaced.
  const std::string described = graph().nodes[graph().nodes.Order()[0]].Describe();
  EXPECT_NE(described.find("(ElementwiseChain), fused from node 'a' (Relu), node 'b' (Mul), node 'c' (Sub), node 'y' (Tanh)"), std::string::npos)
      << described;
  ExpectSameOutputs({Input("x", {5})});
}

// A node fused again passes on what it was fused from; past the first few, a count.
TEST_F(RulesTest, FusedNodesNameTheirOriginsThroughLaterFusions) {
  model.Input("x", DataType::kFloat, {1, 4, 6, 6});
  model.Initializer("w", Floats({16, 4, 3, 3}, 2));
  model.Node("Conv", {"x", "w"}, {"c"}, "conv");
  model.Node("Relu", {"c"}, {"r"}, "relu");
  model.Output("r", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("FuseActivation", FuseActivation), 1);
  const std::string fused = Only(internal_ops::kFusedConv).Describe();
  EXPECT_NE(fused.find(", fused from node 'conv' (Conv), node 'relu' (Relu)"), std::string::npos) << fused;

  Node chain;
  chain.fused_from = {"node 'a' (Relu)", "node 'b' (Neg)", "node 'c' (Abs)", "node 'd' (Exp)"};
  chain.fused_count = 10;
  auto proto = std::make_shared<onnx::NodeProto>();
  proto->set_op_type("ElementwiseChain");
  proto->set_name("v1");
  chain.proto = proto;
  EXPECT_EQ(chain.Describe(),
            "node 'v1' (ElementwiseChain), fused from node 'a' (Relu), node 'b' (Neg), node 'c' (Abs), node 'd' (Exp) "
            "and 6 more");
}

TEST_F(RulesTest, FuseElementwiseChainStopsAtAValueReadTwice) {
  model.Input("x", DataType::kFloat, {5});
  model.Node("Relu", {"x"}, {"a"});
  model.Node("Neg", {"a"}, {"b"});
  model.Node("Abs", {"b"}, {"y"});
  model.Node("Exp", {"b"}, {"z"});
  model.Output("y", DataType::kFloat, {5});
  model.Output("z", DataType::kFloat, {5});
  EXPECT_EQ(Run("FuseElementwiseChain", FuseElementwiseChain), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".ElementwiseChain", "Abs", "Exp"}));
}

TEST_F(RulesTest, FuseLayerNormalizationWrittenOut) {
  model.Input("x", DataType::kFloat, {2, 3, 8});
  model.Initializer("axes", Tensor::FromVector<int64_t>({1}, {-1}));
  model.Initializer("eps", Tensor::Scalar<float>(1e-5f));
  model.Initializer("two", Tensor::Scalar<float>(2.0f));
  model.Initializer("gamma", Floats({8}, 1));
  model.Initializer("beta", Floats({8}, 2));
  model.Node("ReduceMean", {"x", "axes"}, {"mean"});
  model.Node("Sub", {"x", "mean"}, {"d"});
  model.Node("Pow", {"d", "two"}, {"sq"});
  model.Node("ReduceMean", {"sq", "axes"}, {"var"});
  model.Node("Add", {"var", "eps"}, {"ve"});
  model.Node("Sqrt", {"ve"}, {"sd"});
  model.Node("Div", {"d", "sd"}, {"n"});
  model.Node("Mul", {"n", "gamma"}, {"s"});
  model.Node("Add", {"s", "beta"}, {"y"});
  model.Output("y", DataType::kFloat, {2, 3, 8});
  // Opset 18: ReduceMean takes its axes as an input.
  model.proto().mutable_opset_import(0)->set_version(18);
  EXPECT_EQ(Run("FuseLayerNormalization", FuseLayerNormalization), 1);
  EXPECT_EQ(Ops(), (Names{"LayerNormalization"}));
  ExpectSameOutputs({Input("x", {2, 3, 8})}, 1e-4);
}

// A dynamically quantized convolution's tail, Cast -> Mul(x_scale * w_scale) -> Add(bias per
// channel) -> Relu (or a Relu6: Clip 0..6, bounds as inputs), is one DequantizeAccumulator with the
// four ops' values bit for bit (the next DynamicQuantizeLinear would amplify any ulp); a
// per-channel scale (not one value) stays.
TEST_F(RulesTest, FuseConvIntegerTailKeepsTheBits) {
  for (int variant = 0; variant < 3; ++variant) {
    const bool one_scale = variant != 1, clip = variant == 2;
    SCOPED_TRACE(!one_scale ? "per-channel scale" : clip ? "one scale, Clip" : "one scale, Relu");
    NewModel();
    model.Input("x", DataType::kFloat, {1, 3, 6, 6});
    Tensor w(DataType::kUint8, {4, 3, 3, 3});
    for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<uint8_t>()[i] = static_cast<uint8_t>((i * 37) % 256);
    model.Initializer("w", w);
    model.Initializer("wz", Tensor::Scalar<uint8_t>(uint8_t{131}));
    model.Initializer("w_scale", one_scale ? Tensor::Scalar<float>(0.0173f) : Floats({4, 1, 1}, 9));
    model.Initializer("bias", Floats({1, 4, 1, 1}, 3));
    model.Node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
    model.Node("Mul", {"xs", "w_scale"}, {"scale"});
    SetAttr(model.Node("ConvInteger", {"xq", "w", "xz", "wz"}, {"acc"}), "pads", std::vector<int64_t>{1, 1, 1, 1});
    SetAttr(model.Node("Cast", {"acc"}, {"accf"}), "to", static_cast<int64_t>(onnx::TensorProto::FLOAT));
    model.Node("Mul", {"accf", "scale"}, {"p"});
    model.Node("Add", {"bias", "p"}, {"b"});
    if (clip) {
      model.Initializer("lo", Tensor::Scalar<float>(0.0f));
      model.Initializer("hi", Tensor::Scalar<float>(6.0f));
      model.Node("Clip", {"b", "lo", "hi"}, {"y"});
    } else {
      model.Node("Relu", {"b"}, {"y"});
    }
    model.Output("y", DataType::kFloat, {1, 4, 6, 6});
    EXPECT_EQ(Run("FuseConvIntegerTail", FuseConvIntegerTail), one_scale ? 1 : 0);
    if (one_scale) {
      EXPECT_EQ(Ops(), (Names{"DynamicQuantizeLinear", "Mul", "ConvInteger",
                              std::string(kOnnxflowDomain) + ".DequantizeAccumulator"}));
    }
    SessionOptions plain;
    plain.optimize = false;
    auto a = Session::LoadFromBytes(model.Serialize(), plain);
    auto b = Session::LoadFromBytes(model.Serialize());
    ASSERT_TRUE(a.ok() && b.ok());
    const std::vector<NamedValue> inputs = {Input("x", {1, 3, 6, 6}, 4)};
    auto ya = a->Run(inputs), yb = b->Run(inputs);
    ASSERT_TRUE(ya.ok() && yb.ok()) << ya.status().ToString() << " " << yb.status().ToString();
    const Tensor& ta = (*ya)[0].value.tensor();
    const Tensor& tb = (*yb)[0].value.tensor();
    ASSERT_EQ(ta.size(), tb.size());
    for (int64_t i = 0; i < ta.size(); ++i) ASSERT_EQ(ta.data<float>()[i], tb.data<float>()[i]) << i;
  }
}

TEST_F(RulesTest, FuseDynamicQuantMatMulWithBias) {
  model.Input("x", DataType::kFloat, {3, 8});
  Tensor w(DataType::kInt8, {8, 4});
  for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 29) % 255 - 127);
  model.Initializer("w", w);
  model.Initializer("w_scale", Tensor::Scalar<float>(0.02f));
  model.Initializer("bias", Floats({4}, 3));
  model.Node("DynamicQuantizeLinear", {"x"}, {"xq", "xs", "xz"});
  model.Node("MatMulInteger", {"xq", "w", "xz"}, {"acc"});
  SetAttr(model.Node("Cast", {"acc"}, {"accf"}), "to", static_cast<int64_t>(onnx::TensorProto::FLOAT));
  model.Node("Mul", {"xs", "w_scale"}, {"scale"});
  model.Node("Mul", {"accf", "scale"}, {"p"});
  model.Node("Add", {"p", "bias"}, {"y"});
  model.Output("y", DataType::kFloat, {3, 4});
  EXPECT_EQ(Run("FuseDynamicQuantMatMul", FuseDynamicQuantMatMul), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kMsDomain) + ".DynamicQuantizeMatMul"}));
  ExpectSameOutputs({Input("x", {3, 8})}, 1e-4);
}

TEST_F(RulesTest, FuseAttentionOneNode) {
  // q, k, v [1, 4, 2, 8] (B, S, N, D): Transposes to heads, Q K^T / sqrt(D), Softmax, times V, back.
  for (const char* name : {"q", "k", "v"}) model.Input(name, DataType::kFloat, {1, 4, 2, 8});
  model.Initializer("root", Tensor::Scalar<float>(std::sqrt(8.0f)));
  SetAttr(model.Node("Transpose", {"q"}, {"qt"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  SetAttr(model.Node("Transpose", {"k"}, {"kt"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
  SetAttr(model.Node("Transpose", {"v"}, {"vt"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  model.Node("MatMul", {"qt", "kt"}, {"scores"});
  model.Node("Div", {"scores", "root"}, {"scaled"});
  SetAttr(model.Node("Softmax", {"scaled"}, {"probs"}), "axis", int64_t{-1});
  model.Node("MatMul", {"probs", "vt"}, {"ctx"});
  SetAttr(model.Node("Transpose", {"ctx"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
  model.Output("y", DataType::kFloat, {1, 4, 2, 8});
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".FusedAttention"}));
  ExpectSameOutputs({Input("q", {1, 4, 2, 8}, 1), Input("k", {1, 4, 2, 8}, 2), Input("v", {1, 4, 2, 8}, 3)}, 1e-4);
}

// A decoder step: K and V are the cache Concat(past, new heads) in (B, N, S, D), also the step's
// present outputs; the attention reads them in place (kv_layout BNSD) and the Concats stay.
TEST_F(RulesTest, FuseAttentionReadsTheKeyValueCache) {
  model.Input("q", DataType::kFloat, {1, 1, 2, 8});
  for (const char* name : {"k", "v"}) model.Input(name, DataType::kFloat, {1, 1, 2, 8});
  for (const char* name : {"past_k", "past_v"}) model.Input(name, DataType::kFloat, {1, 2, 3, 8});
  model.Input("mask", DataType::kFloat, {1, 1, 1, 4});
  model.Initializer("scale", Tensor::Scalar<float>(std::sqrt(8.0f)));
  HeadsAfterCaches(-2, 2);
  ScaledScores("qh", "present_k", "Div");
  model.Node("Add", {"scaled", "mask"}, {"masked"});
  ProbabilitiesTimes("masked", "present_v", {1, 1, 2, 8}, {1, 2, 4, 8});
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 1);
  EXPECT_EQ(Ops(), (Names{"Transpose", "Transpose", "Concat", "Concat", std::string(kOnnxflowDomain) + ".FusedAttention"}));
  Tensor mask(DataType::kFloat, {1, 1, 1, 4});
  for (int i = 0; i < 4; ++i) mask.mutable_data<float>()[i] = i == 1 ? -1e9f : 0.0f;
  ExpectSameOutputs({Input("q", {1, 1, 2, 8}, 1), Input("k", {1, 1, 2, 8}, 2), Input("v", {1, 1, 2, 8}, 3),
                     Input("past_k", {1, 2, 3, 8}, 4), Input("past_v", {1, 2, 3, 8}, 5), {"mask", mask}},
                    1e-4);
}

// A merged decoder's step: the attention of FuseAttentionReadsTheKeyValueCache inside an If's
// branch, its caches and mask the main graph's inputs. The branch does not know them as declared
// 4-D caches until InheritOuterScope gives it their declarations; then the fusion reads the cache
// in place there as it does at the top.
TEST_F(RulesTest, FuseAttentionInABranchReadsTheMainGraphsCache) {
  model.Input("q", DataType::kFloat, {1, 1, 2, 8});
  for (const char* name : {"k", "v"}) model.Input(name, DataType::kFloat, {1, 1, 2, 8});
  for (const char* name : {"past_k", "past_v"}) model.Input(name, DataType::kFloat, {1, 2, 3, 8});
  model.Input("mask", DataType::kFloat, {1, 1, 1, 4});
  model.Input("c", DataType::kBool, {});
  model.Initializer("scale", Tensor::Scalar<float>(std::sqrt(8.0f)));
  HeadsAfterCaches(-2, 2);
  ScaledScores("qh", "present_k", "Div");
  model.Node("Add", {"scaled", "mask"}, {"masked"});
  ProbabilitiesTimes("masked", "present_v", {1, 1, 2, 8}, {1, 2, 4, 8});
  IntoCacheBranch();

  Graph& g = graph();
  Graph& with_past = *Only("If").subgraphs.at("then_branch");
  ASSERT_TRUE(RunRule(&with_past, "FuseAttention", FuseAttention).ok());
  size_t fused = 0;
  for (const Node& n : with_past.nodes) fused += n.op_type() == internal_ops::kFusedAttention;
  EXPECT_EQ(fused, 0u) << "the caches are outer values of unknown shape";
  InheritOuterScope(&g);
  ASSERT_TRUE(RunRule(&with_past, "FuseAttention", FuseAttention).ok());
  for (const Node& n : with_past.nodes) fused += n.op_type() == internal_ops::kFusedAttention;
  EXPECT_EQ(fused, 1u);
  Tensor mask(DataType::kFloat, {1, 1, 1, 4});
  for (int i = 0; i < 4; ++i) mask.mutable_data<float>()[i] = i == 1 ? -1e9f : 0.0f;
  ExpectSameOutputs({Input("q", {1, 1, 2, 8}, 1), Input("k", {1, 1, 2, 8}, 2), Input("v", {1, 1, 2, 8}, 3),
                     Input("past_k", {1, 2, 3, 8}, 4), Input("past_v", {1, 2, 3, 8}, 5), {"mask", mask},
                     {"c", Tensor::Scalar<bool>(true)}},
                    1e-4);
}

// A float16 decoder's caches reach its attention through Casts: widened to float by
// ComputeHalfInFloat behind a half graph input, or (exported with float inputs and outputs)
// rounded to half in the main graph of a merged decoder before its branch reads them. The fusion
// finds the declared cache behind them either way; without it the step ran written out (GPT-2
// fp16: 60 Transposes, 24 MatMuls).
TEST_F(RulesTest, FuseAttentionReadsAHalfCacheThroughItsCast) {
  model.Input("q", DataType::kFloat, {1, 1, 2, 8});
  for (const char* name : {"k", "v"}) model.Input(name, DataType::kFloat, {1, 1, 2, 8});
  for (const char* name : {"past_k", "past_v"}) {
    model.Input(std::string(name) + "16", DataType::kFloat16, {1, 2, 3, 8});
    SetAttr(model.Node("Cast", {std::string(name) + "16"}, {name}), "to", int64_t{onnx::TensorProto::FLOAT});
  }
  model.Initializer("scale", Tensor::Scalar<float>(std::sqrt(8.0f)));
  HeadsAfterCaches(2, 2);
  ScaledScores("qh", "present_k", "Div");
  ProbabilitiesTimes("scaled", "present_v", {1, 1, 2, 8}, {1, 2, 4, 8});
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 1);
  ExpectSameOutputs({Input("q", {1, 1, 2, 8}, 1), Input("k", {1, 1, 2, 8}, 2), Input("v", {1, 1, 2, 8}, 3),
                     {"past_k16", Halves({1, 2, 3, 8}, 4)}, {"past_v16", Halves({1, 2, 3, 8}, 5)}},
                    1e-4);
}

TEST_F(RulesTest, FuseAttentionInABranchReadsACacheCastInTheMainGraph) {
  model.Input("q", DataType::kFloat, {1, 1, 2, 8});
  for (const char* name : {"k", "v"}) model.Input(name, DataType::kFloat, {1, 1, 2, 8});
  for (const char* name : {"past_k", "past_v"}) model.Input(std::string(name) + "_in", DataType::kFloat, {1, 2, 3, 8});
  model.Input("c", DataType::kBool, {});
  model.Initializer("scale", Tensor::Scalar<float>(std::sqrt(8.0f)));
  HeadsAfterCaches(2, 2);
  ScaledScores("qh", "present_k", "Div");
  ProbabilitiesTimes("scaled", "present_v", {1, 1, 2, 8}, {1, 2, 4, 8});
  IntoCacheBranch();
  for (const char* name : {"past_k", "past_v"}) {  // rounded to half in the main graph, read as float
    onnx::NodeProto* cast = model.proto().mutable_graph()->mutable_node()->Add();
    cast->set_op_type("Cast");
    cast->add_input(std::string(name) + "_in");
    cast->add_output(name);
    onnx::AttributeProto* to = cast->add_attribute();
    to->set_name("to");
    to->set_type(onnx::AttributeProto::INT);
    to->set_i(onnx::TensorProto::FLOAT);
  }
  model.proto().mutable_graph()->mutable_node()->SwapElements(0, 2);  // the If after the Casts
  Graph& g = graph();
  Graph& with_past = *Only("If").subgraphs.at("then_branch");
  InheritOuterScope(&g);
  ASSERT_TRUE(with_past.outer_inputs.count("past_k"));
  EXPECT_EQ(with_past.outer_inputs.at("past_k").shape, (std::vector<int64_t>{1, 2, 3, 8}));
  ASSERT_TRUE(RunRule(&with_past, "FuseAttention", FuseAttention).ok());
  size_t fused = 0;
  for (const Node& n : with_past.nodes) fused += n.op_type() == internal_ops::kFusedAttention;
  EXPECT_EQ(fused, 1u);
  ExpectSameOutputs({Input("q", {1, 1, 2, 8}, 1), Input("k", {1, 1, 2, 8}, 2), Input("v", {1, 1, 2, 8}, 3),
                     Input("past_k_in", {1, 2, 3, 8}, 4), Input("past_v_in", {1, 2, 3, 8}, 5),
                     {"c", Tensor::Scalar<bool>(true)}},
                    1e-4);
}

// A float16 decoder exported with its caches in half (transformers.js's fp16 models): the Concat
// that extends each cache stays in 16 bits after ComputeHalfInFloat (no widening of the past, no
// narrowing of the present at every step), and the fusion reads the present widened for it.
TEST_F(RulesTest, HalfCacheIsExtendedInHalfAndReadFused) {
  for (const char* name : {"q", "k", "v"}) model.Input(name, DataType::kFloat16, {1, 1, 2, 8});
  for (const char* name : {"past_k", "past_v"}) model.Input(name, DataType::kFloat16, {1, 2, 3, 8});
  model.Initializer("scale", Halves({}, 3));
  HeadsAfterCaches(2, 2);
  ScaledScores("qh", "present_k", "Mul");
  ProbabilitiesTimes("scaled", "present_v", {1, 1, 2, 8}, {1, 2, 4, 8}, DataType::kFloat16);
  ASSERT_TRUE(ComputeHalfInFloat(&graph(), 17).ok());
  size_t half_concats = 0;
  for (const Node& n : graph().nodes) {
    half_concats += n.op_type() == "Concat" && KnownType(graph(), n.proto->output(0)) == DataType::kFloat16;
  }
  EXPECT_EQ(half_concats, 2u);
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 1);
  ExpectSameOutputs({{"q", Halves({1, 1, 2, 8}, 1)}, {"k", Halves({1, 1, 2, 8}, 2)}, {"v", Halves({1, 1, 2, 8}, 3)},
                     {"past_k", Halves({1, 2, 3, 8}, 4)}, {"past_v", Halves({1, 2, 3, 8}, 5)}},
                    1e-2);
}

// LLaMA's step: Q already in heads (rotated after the split), the caches repeated for grouped-query
// attention by Unsqueeze/Expand/Reshape: the kernel reads each KV head for its group of query heads.
TEST_F(RulesTest, FuseAttentionReadsARepeatedCacheForGroupedQueries) {
  model.Input("q", DataType::kFloat, {1, 4, 2, 8});  // (B, N, S, D), 4 query heads
  for (const char* name : {"k", "v"}) model.Input(name, DataType::kFloat, {1, 2, 2, 8});  // 2 KV heads
  for (const char* name : {"past_k", "past_v"}) model.Input(name, DataType::kFloat, {1, 2, 3, 8});
  model.Initializer("scale", Tensor::Scalar<float>(1.0f / std::sqrt(8.0f)));
  model.Initializer("axis2", Tensor::FromVector<int64_t>({1}, {2}));
  model.Initializer("groups", Tensor::FromVector<int64_t>({5}, {1, 1, 2, 1, 1}));
  model.Initializer("heads", Tensor::FromVector<int64_t>({4}, {0, 4, -1, 8}));
  for (const char* x : {"k", "v"}) {
    const std::string s(x);
    SetAttr(model.Node("Concat", {"past_" + s, s}, {"present_" + s}), "axis", int64_t{2});
    model.Node("Unsqueeze", {"present_" + s, "axis2"}, {s + "_u"});
    model.Node("Expand", {s + "_u", "groups"}, {s + "_e"});
    model.Node("Reshape", {s + "_e", "heads"}, {s + "_rep"});
  }
  ScaledScores("q", "k_rep", "Mul");
  ProbabilitiesTimes("scaled", "v_rep", {1, 2, 4, 8}, {1, 2, 5, 8});
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 1);
  EXPECT_EQ(Ops(), (Names{"Concat", "Concat", std::string(kOnnxflowDomain) + ".FusedAttention"}));
  ExpectSameOutputs({Input("q", {1, 4, 2, 8}, 1), Input("k", {1, 2, 2, 8}, 2), Input("v", {1, 2, 2, 8}, 3),
                     Input("past_k", {1, 2, 3, 8}, 4), Input("past_v", {1, 2, 3, 8}, 5)},
                    1e-4);
}

// The same as transformers' export writes it: the Expand and Reshape shapes built at run time from
// the cache's batch and length (Gather, Slice and Unsqueeze of Shape, Concat with the constants).
TEST_F(RulesTest, FuseAttentionReadsARepeatedCacheWhoseShapesAreComputed) {
  model.Input("q", DataType::kFloat, {1, 4, 2, 8});
  for (const char* name : {"k", "v"}) model.Input(name, DataType::kFloat, {1, 2, 2, 8});
  for (const char* name : {"past_k", "past_v"}) model.Input(name, DataType::kFloat, {-1, 2, -1, 8});
  model.Initializer("scale", Tensor::Scalar<float>(1.0f / std::sqrt(8.0f)));
  model.Initializer("axis0", Tensor::FromVector<int64_t>({1}, {0}));
  model.Initializer("axis2", Tensor::FromVector<int64_t>({1}, {2}));
  model.Initializer("zero", Tensor::Scalar<int64_t>(0));
  model.Initializer("two", Tensor::FromVector<int64_t>({1}, {2}));
  model.Initializer("three", Tensor::FromVector<int64_t>({1}, {3}));
  for (const auto& [name, value] : std::vector<std::pair<std::string, int64_t>>{{"kv_heads", 2}, {"groups", 2}, {"heads", 4}, {"dim", 8}}) {
    model.Initializer(name, Tensor::FromVector<int64_t>({1}, {value}));
  }
  for (const char* x : {"k", "v"}) {
    const std::string s(x);
    SetAttr(model.Node("Concat", {"past_" + s, s}, {"present_" + s}), "axis", int64_t{2});
    model.Node("Shape", {"present_" + s}, {s + "_shape"});
    model.Node("Gather", {s + "_shape", "zero"}, {s + "_b0"});
    model.Node("Unsqueeze", {s + "_b0", "axis0"}, {s + "_batch"});
    model.Node("Slice", {s + "_shape", "two", "three"}, {s + "_len"});
    SetAttr(model.Node("Concat", {s + "_batch", "kv_heads", "groups", s + "_len", "dim"}, {s + "_eshape"}), "axis",
            int64_t{0});
    SetAttr(model.Node("Concat", {s + "_batch", "heads", s + "_len", "dim"}, {s + "_rshape"}), "axis", int64_t{0});
    model.Node("Unsqueeze", {"present_" + s, "axis2"}, {s + "_u"});
    model.Node("Expand", {s + "_u", s + "_eshape"}, {s + "_e"});
    model.Node("Reshape", {s + "_e", s + "_rshape"}, {s + "_rep"});
  }
  ScaledScores("q", "k_rep", "Mul");
  ProbabilitiesTimes("scaled", "v_rep", {1, 2, 4, 8}, {1, 2, 5, 8});
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 1);
  const Names ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), std::string(kOnnxflowDomain) + ".FusedAttention"), 1);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Expand"), 0);
  ExpectSameOutputs({Input("q", {1, 4, 2, 8}, 1), Input("k", {1, 2, 2, 8}, 2), Input("v", {1, 2, 2, 8}, 3),
                     Input("past_k", {1, 2, 3, 8}, 4), Input("past_v", {1, 2, 3, 8}, 5)},
                    1e-4);
}

// GPT-2 as transformers writes it: Where(causal, scaled scores, lowest), then the padding mask added.
// The Where becomes an additive mask summed with the padding one; the probabilities are the same.
TEST_F(RulesTest, FuseAttentionTakesTheCausalWhere) {
  model.Input("q", DataType::kFloat, {1, 3, 2, 8});
  for (const char* name : {"k", "v"}) model.Input(name, DataType::kFloat, {1, 3, 2, 8});
  for (const char* name : {"past_k", "past_v"}) model.Input(name, DataType::kFloat, {1, 2, 2, 8});
  model.Input("causal", DataType::kBool, {1, 1, 3, 5});
  model.Input("padding", DataType::kFloat, {1, 1, 1, 5});
  model.Initializer("scale", Tensor::Scalar<float>(std::sqrt(8.0f)));
  model.Initializer("lowest", Tensor::Scalar<float>(std::numeric_limits<float>::lowest()));
  HeadsAfterCaches(-2, -2);
  ScaledScores("qh", "present_k", "Div");
  model.Node("Where", {"causal", "scaled", "lowest"}, {"causal_scores"});
  model.Node("Add", {"causal_scores", "padding"}, {"masked"});
  ProbabilitiesTimes("masked", "present_v", {1, 3, 2, 8}, {1, 2, 5, 8});
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 1);
  EXPECT_EQ(Ops(), (Names{"Where", "Add", "Transpose", "Transpose", "Concat", "Concat",
                          std::string(kOnnxflowDomain) + ".FusedAttention"}));
  // Query i (at position 2 + i) sees keys 0 .. 2 + i; the padding hides key 1 from every query.
  Tensor causal(DataType::kBool, {1, 1, 3, 5}), padding(DataType::kFloat, {1, 1, 1, 5});
  for (int i = 0; i < 3; ++i) {
    for (int j = 0; j < 5; ++j) causal.mutable_data<bool>()[i * 5 + j] = j <= 2 + i;
  }
  for (int j = 0; j < 5; ++j) padding.mutable_data<float>()[j] = j == 1 ? std::numeric_limits<float>::lowest() : 0.0f;
  ExpectSameOutputs({Input("q", {1, 3, 2, 8}, 1), Input("k", {1, 3, 2, 8}, 2), Input("v", {1, 3, 2, 8}, 3),
                     Input("past_k", {1, 2, 2, 8}, 4), Input("past_v", {1, 2, 2, 8}, 5), {"causal", causal},
                     {"padding", padding}},
                    1e-4);
}

// The same Concat of two computed heads, no cache, is still 4-D (its inputs are Transposes into
// heads): read in place as heads. With values of unknown rank (a 2-D V would broadcast over the
// probabilities' batch and heads) it stays unfused.
class ComputedHeadsTest : public RulesTest {
 protected:
  void Build(bool v_rank_known) {
    for (const char* name : {"q", "k", "v", "k2", "v2"}) model.Input(name, DataType::kFloat, {1, 1, 2, 8});
    model.Initializer("scale", Tensor::Scalar<float>(std::sqrt(8.0f)));
    SetAttr(model.Node("Transpose", {"k2"}, {"past_k"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    if (v_rank_known) {
      SetAttr(model.Node("Transpose", {"v2"}, {"past_v"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    } else {
      model.Input("v_any", DataType::kFloat, {}, /*rank_known=*/false);
      model.Node("Identity", {"v_any"}, {"past_v"});
    }
    HeadsAfterCaches(2, 2);
    ScaledScores("qh", "present_k", "Div");
    // Unknown: the probabilities times v_any itself (a Concat with the 4-D heads would be 4-D).
    ProbabilitiesTimes("scaled", v_rank_known ? "present_v" : "past_v", {1, 1, 2, 8}, {1, 2, 2, 8});
  }
};

TEST_F(ComputedHeadsTest, ConcatOfHeadsIsReadInPlace) {
  Build(true);
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 1);
  EXPECT_EQ(Only(internal_ops::kFusedAttention).proto->input(1), "present_k");
  ExpectSameOutputs({Input("q", {1, 1, 2, 8}, 1), Input("k", {1, 1, 2, 8}, 2), Input("v", {1, 1, 2, 8}, 3),
                     Input("k2", {1, 1, 2, 8}, 4), Input("v2", {1, 1, 2, 8}, 5)},
                    1e-4);
}

TEST_F(ComputedHeadsTest, ValuesOfUnknownRankStay) {
  Build(false);
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 0);
}

// GPT-2's gelu_new after a product: 0.5 h (1 + tanh(sqrt(2/pi) (h + 0.044715 h^3))), torch's order.
class GeluTanhTest : public RulesTest {
 protected:
  void Build(float cubic, float root = 0.7978845608f) {
    model.Input("x", DataType::kFloat, {2, 8});
    model.Initializer("w", Floats({8, 8}, 2));
    for (const auto& [name, value] : std::vector<std::pair<const char*, float>>{
             {"three", 3.0f}, {"cubic", cubic}, {"root", root}, {"one", 1.0f}, {"half", 0.5f}}) {
      model.Initializer(name, Tensor::Scalar<float>(value));
    }
    model.Node("MatMul", {"x", "w"}, {"h"});
    model.Node("Pow", {"h", "three"}, {"h3"});
    model.Node("Mul", {"h3", "cubic"}, {"c"});
    model.Node("Add", {"h", "c"}, {"inner"});
    model.Node("Mul", {"inner", "root"}, {"scaled"});
    model.Node("Tanh", {"scaled"}, {"t"});
    model.Node("Add", {"t", "one"}, {"t1"});
    model.Node("Mul", {"h", "half"}, {"hh"});
    model.Node("Mul", {"hh", "t1"}, {"y"});
    model.Output("y", DataType::kFloat, {2, 8});
  }
};

TEST_F(GeluTanhTest, BecomesFastGelu) {
  Build(0.044715f);
  EXPECT_EQ(Run("FuseGeluTanh", FuseGeluTanh), 1);
  EXPECT_EQ(Ops(), (Names{"MatMul", std::string(kMsDomain) + ".FastGelu"}));
  ExpectSameOutputs({Input("x", {2, 8})}, 1e-5);
}

// A float16 model's constants, widened by ComputeHalfInFloat: 0.044715 and sqrt(2/pi) rounded to
// half (0.0447082, 0.7978516) are still GPT-2's GELU (its fp16 export ran it as 7 nodes).
TEST_F(GeluTanhTest, HalfRoundedConstantsBecomeFastGelu) {
  Build(HalfToFloat(FloatToHalf(0.044715f)), HalfToFloat(FloatToHalf(0.7978845608f)));
  EXPECT_EQ(Run("FuseGeluTanh", FuseGeluTanh), 1);
  ExpectSameOutputs({Input("x", {2, 8})}, 1e-3);
}

TEST_F(GeluTanhTest, OtherCubicTermStays) {
  Build(0.05f);
  EXPECT_EQ(Run("FuseGeluTanh", FuseGeluTanh), 0);
}

// DQ(x) and DQ(w) -> Conv -> Q: one QLinearConv, and the weights' DequantizeLinear goes.
TEST_F(RulesTest, FuseAtQuantizeMakesQLinearConv) {
  model.Input("x", DataType::kUint8, {1, 4, 5, 5});
  Tensor w(DataType::kInt8, {8, 4, 3, 3});
  for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 13) % 61 - 30);
  model.Initializer("w", w);
  model.Initializer("xs", Tensor::Scalar<float>(0.05f));
  model.Initializer("xz", Tensor::Scalar<uint8_t>(128));
  model.Initializer("ws", Tensor::Scalar<float>(0.01f));
  model.Initializer("ys", Tensor::Scalar<float>(0.1f));
  model.Initializer("yz", Tensor::Scalar<uint8_t>(120));
  model.Node("DequantizeLinear", {"x", "xs", "xz"}, {"xf"});
  model.Node("DequantizeLinear", {"w", "ws"}, {"wf"});
  model.Node("Conv", {"xf", "wf"}, {"c"});
  model.Node("QuantizeLinear", {"c", "ys", "yz"}, {"y"});
  model.Output("y", DataType::kUint8, {1, 8, 3, 3});
  EXPECT_EQ(Run("FuseAtQuantize", FuseAtQuantize), 1);
  EXPECT_EQ(Run("DropUnreadDequantize", DropUnreadDequantize), 2);
  EXPECT_EQ(Ops(), (Names{"QLinearConv"}));
  EXPECT_EQ(Only("QLinearConv").proto->input(3), "w");  // the int8 weights, never widened
}

TEST_F(RulesTest, FuseAtQuantizeLeavesAFloatOp) {
  model.Input("x", DataType::kFloat, {4});
  model.Initializer("ys", Tensor::Scalar<float>(0.1f));
  model.Node("Exp", {"x"}, {"e"});
  model.Node("QuantizeLinear", {"e", "ys"}, {"y"});
  model.Output("y", DataType::kUint8, {4});
  EXPECT_EQ(Run("FuseAtQuantize", FuseAtQuantize), 0);
  EXPECT_EQ(Ops(), (Names{"Exp", "QuantizeLinear"}));
}

// DQ -> Relu -> Reshape -> Transpose -> Reshape -> Q, a channel shuffle between two quantized
// convolutions (ShuffleNet): Q moves before the byte moves and the Relu, then meets the DQ.
class ShuffleChainTest : public RulesTest {
 protected:
  // y's parameters `ys`, `yz`; x's are 0.07 and `xz`.
  void Chain(float ys, uint8_t yz, uint8_t xz = 3) {
    model.Input("x", DataType::kUint8, {1, 6, 2, 3});
    model.Initializer("xs", Tensor::Scalar<float>(0.07f));
    model.Initializer("xz", Tensor::Scalar<uint8_t>(xz));
    model.Initializer("ys", Tensor::Scalar<float>(ys));
    model.Initializer("yz", Tensor::Scalar<uint8_t>(yz));
    model.Initializer("split", Tensor::FromVector<int64_t>({5}, {1, 2, 3, 2, 3}));
    model.Initializer("merged", Tensor::FromVector<int64_t>({4}, {1, 6, 2, 3}));
    model.Node("DequantizeLinear", {"x", "xs", "xz"}, {"f"});
    model.Node("Relu", {"f"}, {"r"});
    model.Node("Reshape", {"r", "split"}, {"s"});
    SetAttr(model.Node("Transpose", {"s"}, {"t"}), "perm", std::vector<int64_t>{0, 2, 1, 3, 4});
    model.Node("Reshape", {"t", "merged"}, {"m"});
    model.Node("QuantizeLinear", {"m", "ys", "yz"}, {"y"});
    model.Output("y", DataType::kUint8, {1, 6, 2, 3});
  }
  void ExpectSameBytes() {
    Tensor x(DataType::kUint8, {1, 6, 2, 3});
    for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 41);
    ExpectSameOutputs({{"x", x}}, 0.0);
  }
};

// Other parameters, zero point 0: the Relu goes (the quantization clamps at zero), DQ -> Q is a lookup.
TEST_F(ShuffleChainTest, QuantizeMovesBeforeTheShuffleAndTheRelu) {
  Chain(0.05f, 0);
  EXPECT_EQ(Run("FuseAtQuantize", FuseAtQuantize), 1);
  EXPECT_EQ(Run("FuseRequantize", FuseRequantize), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".ByteLookup", "Reshape", "Transpose", "Reshape"}));
  ExpectSameBytes();
}

// A zero point above 0: the Relu stays, as a Max with it on bytes.
TEST_F(ShuffleChainTest, AReluBecomesAMaxWithTheZeroPoint) {
  Chain(0.05f, 9);
  EXPECT_EQ(Run("FuseAtQuantize", FuseAtQuantize), 1);
  EXPECT_EQ(Run("FuseRequantize", FuseRequantize), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".ByteLookup", "Max", "Reshape", "Transpose", "Reshape"}));
  ExpectSameBytes();
}

// x's own parameters: the Relu is a Max on x itself, and the DQ goes unread.
TEST_F(ShuffleChainTest, EqualParametersLeaveNoLookup) {
  Chain(0.07f, 3);
  EXPECT_EQ(Run("FuseAtQuantize", FuseAtQuantize), 1);
  EXPECT_EQ(Run("FuseRequantize", FuseRequantize), 0);
  EXPECT_EQ(Run("DropUnreadDequantize", DropUnreadDequantize), 1);
  EXPECT_EQ(Ops(), (Names{"Max", "Reshape", "Transpose", "Reshape"}));
  ExpectSameBytes();
}

// Equal parameters with zero point 0: the Relu goes, and DQ -> Q is an Identity (removed later).
TEST_F(ShuffleChainTest, AnEqualPairIsAnIdentity) {
  Chain(0.07f, 0, 0);
  EXPECT_EQ(Run("FuseAtQuantize", FuseAtQuantize), 1);
  EXPECT_EQ(Run("FuseRequantize", FuseRequantize), 1);
  EXPECT_EQ(Ops(), (Names{"Identity", "Reshape", "Transpose", "Reshape"}));
  ExpectSameBytes();
}

// DQ -> Q with other parameters (ResNet's Add -> Relu -> Q once the Relu went): one ByteLookup
// whose table is the pair's arithmetic, so the outputs are the same bytes.
TEST_F(RulesTest, FuseRequantizeMakesAByteLookup) {
  model.Input("x", DataType::kUint8, {2, 300});
  model.Initializer("xs", Tensor::Scalar<float>(0.07f));
  model.Initializer("xz", Tensor::Scalar<uint8_t>(131));
  model.Initializer("ys", Tensor::Scalar<float>(0.05f));
  model.Initializer("yz", Tensor::Scalar<int8_t>(-3));
  model.Node("DequantizeLinear", {"x", "xs", "xz"}, {"f"});
  model.Node("QuantizeLinear", {"f", "ys", "yz"}, {"y"});
  model.Output("y", DataType::kInt8, {2, 300});
  EXPECT_EQ(Run("FuseRequantize", FuseRequantize), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".ByteLookup"}));
  Tensor x(DataType::kUint8, {2, 300});
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 7);
  ExpectSameOutputs({{"x", x}}, 0.0);
}

// DQ -> Pad | nearest Resize | Slice | Gather -> Q with the same parameters: the op on bytes (the
// constant pad is the zero point), the same bytes out.
TEST_F(RulesTest, SelectingOpsRunOnBytes) {
  model.Input("x", DataType::kUint8, {1, 2, 3, 4});
  model.Initializer("s", Tensor::Scalar<float>(0.1f));
  model.Initializer("z", Tensor::Scalar<uint8_t>(9));
  model.Initializer("pads", Tensor::FromVector<int64_t>({8}, {0, 0, 1, 2, 0, 0, 2, 1}));
  model.Initializer("roi", Tensor::FromVector<float>({0}, {}));
  model.Initializer("scales", Tensor::FromVector<float>({4}, {1, 1, 2, 1.5f}));
  model.Initializer("starts", Tensor::FromVector<int64_t>({1}, {1}));
  model.Initializer("ends", Tensor::FromVector<int64_t>({1}, {3}));
  model.Initializer("axes", Tensor::FromVector<int64_t>({1}, {3}));
  model.Initializer("idx", Tensor::FromVector<int64_t>({3}, {2, 0, 2}));
  model.Node("DequantizeLinear", {"x", "s", "z"}, {"f"});
  model.Node("Pad", {"f", "pads"}, {"p"});
  model.Node("Resize", {"f", "roi", "scales"}, {"r"});
  model.Node("Slice", {"f", "starts", "ends", "axes"}, {"sl"});
  SetAttr(model.Node("Gather", {"f", "idx"}, {"ga"}), "axis", int64_t{2});
  const std::vector<std::pair<std::string, std::vector<int64_t>>> outs = {
      {"p", {1, 2, 6, 7}}, {"r", {1, 2, 6, 6}}, {"sl", {1, 2, 3, 2}}, {"ga", {1, 2, 3, 4}}};
  for (const auto& [v, shape] : outs) {
    model.Node("QuantizeLinear", {v, "s", "z"}, {v + "_q"});
    model.Output(v + "_q", DataType::kUint8, shape);
  }
  EXPECT_EQ(Run("FuseAtQuantize", FuseAtQuantize), 4);
  EXPECT_EQ(Run("DropUnreadDequantize", DropUnreadDequantize), 1);
  EXPECT_EQ(Ops(), (Names{"Pad", "Resize", "Slice", "Gather"}));
  Tensor x(DataType::kUint8, {1, 2, 3, 4});
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 23 + 1);
  ExpectSameOutputs({{"x", x}}, 0.0);
}

// DQ -> HardSwish -> Q and DQ -> x * Sigmoid(x) * 0.5 -> Q: a ByteLookup of x, its table the same
// ops over the 256 codes (constant folding computes it at load), so the same bytes out.
class ElementwiseLookupTest : public RulesTest {
 protected:
  void Params() {
    model.Input("x", DataType::kInt8, {3, 100});
    model.Initializer("xs", Tensor::Scalar<float>(0.04f));
    model.Initializer("xz", Tensor::Scalar<int8_t>(-7));
    model.Initializer("ys", Tensor::Scalar<float>(0.03f));
    model.Initializer("yz", Tensor::Scalar<uint8_t>(20));
    model.Node("DequantizeLinear", {"x", "xs", "xz"}, {"f"});
  }
  void ExpectSameBytes() {
    Tensor x(DataType::kInt8, {3, 100});
    for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<int8_t>()[i] = static_cast<int8_t>(i * 5);
    ExpectSameOutputs({{"x", x}}, 0.0);
  }
  const std::string lookup = std::string(kOnnxflowDomain) + ".ByteLookup";
};

TEST_F(ElementwiseLookupTest, HardSwish) {
  Params();
  model.Node("HardSwish", {"f"}, {"h"});
  model.Node("QuantizeLinear", {"h", "ys", "yz"}, {"y"});
  model.Output("y", DataType::kUint8, {3, 100});
  EXPECT_EQ(Run("FuseElementwiseLookup", FuseElementwiseLookup), 1);
  EXPECT_EQ(Ops(), (Names{"DequantizeLinear", "DequantizeLinear", "HardSwish", "QuantizeLinear", lookup}));
  ExpectSameBytes();
}

TEST_F(ElementwiseLookupTest, SwishTimesAConstant) {
  Params();
  model.Initializer("half", Tensor::Scalar<float>(0.5f));
  model.Node("Sigmoid", {"f"}, {"s"});
  model.Node("Mul", {"f", "s"}, {"m"});
  model.Node("Mul", {"m", "half"}, {"h"});
  model.Node("QuantizeLinear", {"h", "ys", "yz"}, {"y"});
  model.Output("y", DataType::kUint8, {3, 100});
  EXPECT_EQ(Run("FuseElementwiseLookup", FuseElementwiseLookup), 1);
  EXPECT_EQ(Run("DropUnreadDequantize", DropUnreadDequantize), 1);
  EXPECT_EQ(Ops(), (Names{"DequantizeLinear", "Sigmoid", "Mul", "Mul", "QuantizeLinear", lookup}));
  ExpectSameBytes();
}

// A constant that varies along the batch axis (not a per-channel shift, which fuses: below) or a
// value read outside: nothing fuses.
TEST_F(ElementwiseLookupTest, LeavesWhatIsNotAFunctionOfXAlone) {
  Params();
  model.Initializer("shift", Floats({3, 1}, 3));
  model.Node("Add", {"f", "shift"}, {"a"});
  model.Node("QuantizeLinear", {"a", "ys", "yz"}, {"y"});
  model.Node("Tanh", {"f"}, {"t"});
  model.Node("QuantizeLinear", {"t", "ys", "yz"}, {"y2"});
  model.Output("y", DataType::kUint8, {3, 100});
  model.Output("y2", DataType::kUint8, {3, 100});
  model.Output("t", DataType::kFloat, {3, 100});
  EXPECT_EQ(Run("FuseElementwiseLookup", FuseElementwiseLookup), 0);
}

// The self-gated activations as the group fusions leave them: QLinearMul(x, QLinearSigmoid(x))
// (YOLO's SiLU), and a chain of 8-bit unary ops: one ByteLookup of x, its table the same ops over
// the 256 codes, so the same bytes out (every code occurs in the input).
class ByteConeTest : public RulesTest {
 protected:
  ByteConeTest() {
    auto* ms = model.proto().add_opset_import();
    ms->set_domain(kMsDomain);
    ms->set_version(1);
    model.Input("x", DataType::kUint8, {3, 100});
    model.Initializer("xs", Tensor::Scalar<float>(0.04f));
    model.Initializer("xz", Tensor::Scalar<uint8_t>(97));
    model.Initializer("ss", Tensor::Scalar<float>(1.0f / 255));
    model.Initializer("sz", Tensor::Scalar<uint8_t>(0));
    model.Initializer("ys", Tensor::Scalar<float>(0.03f));
    model.Initializer("yz", Tensor::Scalar<uint8_t>(20));
  }
  void Sigmoid(const std::string& in, const std::string& out) {
    model.Node("QLinearSigmoid", {in, "xs", "xz", "ss", "sz"}, {out}).set_domain(kMsDomain);
  }
  void Mul(const std::string& a, const std::string& b, const std::string& out) {
    model.Node("QLinearMul", {a, "xs", "xz", b, "ss", "sz", "ys", "yz"}, {out}).set_domain(kMsDomain);
  }
  void ExpectSameBytes() {
    Tensor x(DataType::kUint8, {3, 100});
    for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 5);
    ExpectSameOutputs({{"x", x}}, 0.0);
  }
  const std::string lookup = std::string(kOnnxflowDomain) + ".ByteLookup";
  const std::string sigmoid = std::string(kMsDomain) + ".QLinearSigmoid";
  const std::string mul = std::string(kMsDomain) + ".QLinearMul";
};

TEST_F(ByteConeTest, SiluBecomesOneLookup) {
  Sigmoid("x", "s");
  Mul("x", "s", "y");
  model.Output("y", DataType::kUint8, {3, 100});
  EXPECT_EQ(Run("FuseByteCone", FuseByteCone), 1);
  EXPECT_EQ(Ops(), (Names{sigmoid, mul, lookup}));  // the table's nodes, folded at load
  EXPECT_EQ(Only("ByteLookup").proto->input(0), "x");
  ExpectSameBytes();
}

TEST_F(ByteConeTest, AChainOfUnaryOps) {
  auto& leaky = model.Node("QLinearLeakyRelu", {"x", "xs", "xz", "xs", "xz"}, {"l"});
  leaky.set_domain(kMsDomain);
  tools::SetAttr(leaky, "alpha", 0.1f);
  Sigmoid("l", "y");
  model.Output("y", DataType::kUint8, {3, 100});
  EXPECT_EQ(Run("FuseByteCone", FuseByteCone), 1);
  EXPECT_EQ(Only("ByteLookup").proto->input(0), "x");
  ExpectSameBytes();
}

// Near misses: the gate also read elsewhere (a graph output), a product of two values, a scale
// computed at run time; and one op alone (it is its own lookup already).
TEST_F(ByteConeTest, LeavesWhatIsNotAFunctionOfXAlone) {
  model.Input("other", DataType::kUint8, {3, 100});
  model.Input("run_scale", DataType::kFloat, {});
  Sigmoid("x", "s");
  Mul("x", "s", "y");
  Mul("x", "other", "y2");
  Sigmoid("x", "s3");
  model.Node("QLinearMul", {"x", "run_scale", "xz", "s3", "ss", "sz", "ys", "yz"}, {"y3"}).set_domain(kMsDomain);
  Sigmoid("x", "y4");
  for (const char* out : {"y", "s", "y2", "y3", "y4"}) model.Output(out, DataType::kUint8, {3, 100});
  EXPECT_EQ(Run("FuseByteCone", FuseByteCone), 0);
}

// DenseNet's pre-activation DQ -> BatchNormalization -> Relu -> Q (here with a Q per channel of
// axis 1): one ByteLookup per channel whose rows hold ONNX Runtime's arithmetic (inv_std = 1 /
// sqrt(var + eps), s = inv_std * scale, b = bias - mean * s, y = x * s + b, no FMA). The two
// channels' parameters are two of DenseNet-121's where that order matters: code 194 of the first
// gives 145 in ONNX Runtime 1.30 (onnxflow's BatchNormalization kernel, then the Q: 144), code 170
// of the second 111 (110). Every other code is checked against the formula written out here.
TEST_F(RulesTest, BatchNormBetweenDqAndQIsAPerChannelLookup) {
  const float xs = 0.028900597244501114f, eps = 9.999999747378752e-06f;
  const std::vector<float> scale = {0.8136520385742188f, 1.0581142902374268f};
  const std::vector<float> bias = {0.12164581567049026f, -0.03837498649954796f};
  const std::vector<float> mean = {-0.15760862827301025f, 0.15494360029697418f};
  const std::vector<float> var = {1.0258256196975708f, 1.3159408569335938f};
  const std::vector<float> ys = {0.015857147052884102f, 0.013798984698951244f};
  model.Input("x", DataType::kUint8, {1, 2, 16, 16});
  model.Initializer("xs", Tensor::Scalar<float>(xs));
  model.Initializer("xz", Tensor::Scalar<uint8_t>(106));
  model.Initializer("scale", Tensor::FromVector<float>({2}, scale));
  model.Initializer("bias", Tensor::FromVector<float>({2}, bias));
  model.Initializer("mean", Tensor::FromVector<float>({2}, mean));
  model.Initializer("var", Tensor::FromVector<float>({2}, var));
  model.Initializer("ys", Tensor::FromVector<float>({2}, ys));
  model.Initializer("yz", Tensor::FromVector<uint8_t>({2}, {0, 0}));
  model.Node("DequantizeLinear", {"x", "xs", "xz"}, {"f"});
  SetAttr(model.Node("BatchNormalization", {"f", "scale", "bias", "mean", "var"}, {"bn"}), "epsilon", eps);
  model.Node("Relu", {"bn"}, {"r"});
  SetAttr(model.Node("QuantizeLinear", {"r", "ys", "yz"}, {"y"}), "axis", int64_t{1});
  model.Output("y", DataType::kUint8, {1, 2, 16, 16});
  const std::string bytes = model.Serialize();
  EXPECT_EQ(Run("FuseElementwiseLookup", FuseElementwiseLookup), 1);
  EXPECT_EQ(Run("DropUnreadDequantize", DropUnreadDequantize), 1);
  const std::string lookup = std::string(kOnnxflowDomain) + ".ByteLookup";
  EXPECT_EQ(Ops(), (Names{"DequantizeLinear", "Mul", "Add", "Relu", "QuantizeLinear", "Reshape", lookup}));
  const auto* axis = Attr(*Only("ByteLookup").proto, "axis");
  ASSERT_NE(axis, nullptr);
  EXPECT_EQ(axis->i(), 1);
  // Its third input, the Affine rows (a channels-last X computes them): ONNX Runtime's s and b.
  ASSERT_EQ(Only("ByteLookup").proto->input_size(), 3);
  const Tensor& affine = graph().constants.at(Only("ByteLookup").proto->input(2));
  ASSERT_EQ(affine.shape(), (std::vector<int64_t>{8, 2}));
  EXPECT_EQ(affine.data<float>()[0], 106.0f);                               // xz
  EXPECT_EQ(affine.data<float>()[2 * 2 + 1], 1.0f / std::sqrt(var[1] + eps) * scale[1]);  // s
  EXPECT_EQ(affine.data<float>()[4 * 2], 0.0f);                             // the Relu's bound

  Tensor x(DataType::kUint8, {1, 2, 16, 16});
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i % 256);
  auto session = Session::LoadFromBytes(bytes, SessionOptions{});
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = session->Run({{"x", x}});
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  const uint8_t* y = (*out)[0].value.tensor().data<uint8_t>();
  for (int c = 0; c < 2; ++c) {
    const float root = std::sqrt(var[c] + eps);
    const float inv_std = 1.0f / root;
    const float s = inv_std * scale[c];
    const float shift = mean[c] * s;
    const float b = bias[c] - shift;
    for (int code = 0; code < 256; ++code) {
      const float v = static_cast<float>(code - 106) * xs;
      const float product = v * s;
      const float sum = std::max(product + b, 0.0f);
      const float q = std::min(255.0f, std::nearbyint(sum / ys[c]));
      ASSERT_EQ(y[c * 256 + code], static_cast<uint8_t>(q)) << "channel " << c << " code " << code;
    }
  }
  EXPECT_EQ(y[194], 145);
  EXPECT_EQ(y[256 + 170], 111);
}

// A per-channel DQ (axis 1) of int8 codes -> Mul and Add by [C, 1, 1] constants -> Clip -> int8
// Q: a per-channel lookup, the table folded with the kernels that would have run (the same
// bytes); and on 2-D values ([N, C], a Gemm's) an Add of a [C] constant, the table transposed
// from the codes' [256, C].
TEST_F(ElementwiseLookupTest, PerChannelConstantsMakeAPerChannelLookup) {
  model.Input("x", DataType::kInt8, {1, 3, 16, 16});
  model.Initializer("xs", Tensor::FromVector<float>({3}, {0.04f, 0.02f, 0.1f}));
  model.Initializer("xz", Tensor::FromVector<int8_t>({3}, {-7, 0, 5}));
  model.Initializer("m", Tensor::FromVector<float>({3, 1, 1}, {1.5f, -0.75f, 0.3f}));
  model.Initializer("a", Tensor::FromVector<float>({3, 1, 1}, {0.1f, 2.0f, -0.4f}));
  model.Initializer("lo", Tensor::Scalar<float>(-1.0f));
  model.Initializer("hi", Tensor::Scalar<float>(6.0f));
  model.Initializer("ys", Tensor::Scalar<float>(0.03f));
  model.Initializer("yz", Tensor::Scalar<int8_t>(-20));
  SetAttr(model.Node("DequantizeLinear", {"x", "xs", "xz"}, {"f"}), "axis", int64_t{1});
  model.Node("Mul", {"f", "m"}, {"fm"});
  model.Node("Add", {"fm", "a"}, {"fa"});
  model.Node("Clip", {"fa", "lo", "hi"}, {"fc"});
  model.Node("QuantizeLinear", {"fc", "ys", "yz"}, {"y"});
  model.Output("y", DataType::kInt8, {1, 3, 16, 16});
  model.Input("g", DataType::kUint8, {4, 100});
  model.Initializer("gs", Tensor::Scalar<float>(0.05f));
  model.Initializer("gz", Tensor::Scalar<uint8_t>(128));
  model.Initializer("shift", Floats({100}, 3));
  model.Node("DequantizeLinear", {"g", "gs", "gz"}, {"gf"});
  model.Node("Add", {"gf", "shift"}, {"ga"});
  model.Node("QuantizeLinear", {"ga", "gs", "gz"}, {"gy"});
  model.Output("gy", DataType::kUint8, {4, 100});
  EXPECT_EQ(Run("FuseElementwiseLookup", FuseElementwiseLookup), 2);
  EXPECT_EQ(Run("DropUnreadDequantize", DropUnreadDequantize), 2);
  int lookups = 0, transposes = 0;
  for (const Node& n : graph().nodes) {
    lookups += n.op_type() == "ByteLookup";
    transposes += n.op_type() == "Transpose";
    EXPECT_NE(n.proto->input(0), "f");  // the float ops read codes now
  }
  EXPECT_EQ(lookups, 2);
  EXPECT_EQ(transposes, 1);
  Tensor x(DataType::kInt8, {1, 3, 16, 16});
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<int8_t>()[i] = static_cast<int8_t>(i % 256);
  Tensor g(DataType::kUint8, {4, 100});
  for (int64_t i = 0; i < g.size(); ++i) g.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 7);
  ExpectSameOutputs({{"x", x}, {"g", g}}, 0.0);
}

// Near misses, each DQ -> op -> Q keeps its float op: a BatchNormalization whose scale is a graph
// input, or in training mode; a DQ per channel of axis 2 before a BatchNormalization; a Q per
// channel of axis 2 after one; a Mul by a constant that varies along axis 3; a [C, 1, 1] Mul on
// X of unknown rank (it would broadcast along other axes).
TEST_F(ElementwiseLookupTest, PerChannelNearMisses) {
  model.Input("x", DataType::kUint8, {1, 3, 4, 5});
  model.Input("u", DataType::kUint8, {}, /*rank_known=*/false);
  model.Input("run_scale", DataType::kFloat, {3});
  model.Initializer("s", Tensor::Scalar<float>(0.05f));
  model.Initializer("z", Tensor::Scalar<uint8_t>(10));
  model.Initializer("c3", Tensor::FromVector<float>({3}, {1.0f, 0.5f, 2.0f}));
  model.Initializer("h4", Tensor::FromVector<float>({4}, {0.1f, 0.2f, 0.3f, 0.4f}));
  model.Initializer("z4", Tensor::FromVector<uint8_t>({4}, {10, 10, 10, 10}));
  model.Initializer("c311", Tensor::FromVector<float>({3, 1, 1}, {1.0f, 0.5f, 2.0f}));
  model.Initializer("w5", Tensor::FromVector<float>({1, 5}, {1.0f, 0.5f, 2.0f, 3.0f, 4.0f}));
  auto bn = [&](const std::string& in, const std::string& scale, const std::string& out) {
    return &model.Node("BatchNormalization", {in, scale, "c3", "c3", "c3"}, {out});
  };
  model.Node("DequantizeLinear", {"x", "s", "z"}, {"f"});
  bn("f", "run_scale", "b1");  // parameters not constant
  model.Node("QuantizeLinear", {"b1", "s", "z"}, {"y1"});
  SetAttr(*bn("f", "c3", "b2"), "training_mode", int64_t{1});
  model.Node("QuantizeLinear", {"b2", "s", "z"}, {"y2"});
  SetAttr(model.Node("DequantizeLinear", {"x", "h4", "z4"}, {"f4"}), "axis", int64_t{2});
  bn("f4", "c3", "b3");  // DQ per channel of the wrong axis
  model.Node("QuantizeLinear", {"b3", "s", "z"}, {"y3"});
  bn("f", "c3", "b4");
  SetAttr(model.Node("QuantizeLinear", {"b4", "h4", "z4"}, {"y4"}), "axis", int64_t{2});  // Q on the wrong axis
  model.Node("Mul", {"f", "w5"}, {"m5"});  // varies along the width
  model.Node("QuantizeLinear", {"m5", "s", "z"}, {"y5"});
  model.Node("DequantizeLinear", {"u", "s", "z"}, {"fu"});
  model.Node("Mul", {"fu", "c311"}, {"m6"});  // X's rank unknown
  model.Node("QuantizeLinear", {"m6", "s", "z"}, {"y6"});
  for (const char* y : {"y1", "y2", "y3", "y4", "y5"}) model.Output(y, DataType::kUint8, {1, 3, 4, 5});
  model.Output("y6", DataType::kUint8, {}, /*rank_known=*/false);
  EXPECT_EQ(Run("FuseElementwiseLookup", FuseElementwiseLookup), 0);
}

// A DQ that another node reads too: the BatchNormalization and Relu still become a lookup of the
// codes, and the DQ stays for its other reader (the float ops were the cost, not the DQ).
TEST_F(RulesTest, APerChannelLookupLeavesASharedDequantize) {
  model.Input("x", DataType::kUint8, {1, 2, 3, 3});
  model.Initializer("s", Tensor::Scalar<float>(0.05f));
  model.Initializer("z", Tensor::Scalar<uint8_t>(100));
  model.Initializer("scale", Tensor::FromVector<float>({2}, {1.25f, 0.5f}));
  model.Initializer("bias", Tensor::FromVector<float>({2}, {0.25f, -1.0f}));
  model.Initializer("mean", Tensor::FromVector<float>({2}, {0.5f, -0.5f}));
  model.Initializer("var", Tensor::FromVector<float>({2}, {4.0f, 0.25f}));
  model.Node("DequantizeLinear", {"x", "s", "z"}, {"f"});
  model.Node("BatchNormalization", {"f", "scale", "bias", "mean", "var"}, {"bn"});
  model.Node("Relu", {"bn"}, {"r"});
  model.Node("QuantizeLinear", {"r", "s", "z"}, {"y"});
  model.Output("y", DataType::kUint8, {1, 2, 3, 3});
  model.Output("f", DataType::kFloat, {1, 2, 3, 3});
  EXPECT_EQ(Run("FuseElementwiseLookup", FuseElementwiseLookup), 1);
  EXPECT_EQ(Run("DropUnreadDequantize", DropUnreadDequantize), 0);
  EXPECT_EQ(Only("ByteLookup").proto->input(0), "x");
  const Names ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "BatchNormalization"), 0);
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "DequantizeLinear"), 2);  // x's, and the table's codes
  Tensor x(DataType::kUint8, {1, 2, 3, 3});
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 13);
  ExpectSameOutputs({{"x", x}}, 0.0);
}

// A DQ whose value another node reads too stays: the pair is not the only use.
TEST_F(RulesTest, FuseRequantizeLeavesASharedDequantize) {
  model.Input("x", DataType::kUint8, {4});
  model.Initializer("s", Tensor::Scalar<float>(0.1f));
  model.Node("DequantizeLinear", {"x", "s"}, {"f"});
  model.Node("QuantizeLinear", {"f", "s"}, {"y"});
  model.Output("y", DataType::kUint8, {4});
  model.Output("f", DataType::kFloat, {4});
  EXPECT_EQ(Run("FuseRequantize", FuseRequantize), 0);
}

// QOperator convolutions, a residual QLinearAdd, an 8-bit MaxPool, a QLinearGlobalAveragePool and
// a channel QLinearConcat run channels-last: one Transpose in, one out per plain reader, the same bytes out.
TEST_F(RulesTest, ChannelsLastQuantRegion) {
  auto* ms_opset = model.proto().add_opset_import();
  ms_opset->set_domain(kMsDomain);
  ms_opset->set_version(1);
  model.Input("x", DataType::kUint8, {1, 6, 7, 7});
  auto weights = [&](const char* name, std::vector<int64_t> shape, int seed) {
    Tensor w(DataType::kInt8, shape);
    for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 13 + seed) % 61 - 30);
    model.Initializer(name, w);
  };
  weights("w1", {8, 6, 3, 3}, 1);
  weights("w2", {8, 8, 1, 1}, 2);
  model.Initializer("s", Tensor::Scalar<float>(0.05f));
  model.Initializer("z", Tensor::Scalar<uint8_t>(100));
  model.Initializer("ws", Tensor::FromVector<float>({8}, {0.01f, 0.02f, 0.015f, 0.01f, 0.03f, 0.005f, 0.01f, 0.02f}));
  model.Initializer("wz", Tensor::Scalar<int8_t>(0));
  model.Initializer("b", Tensor::FromVector<int32_t>({8}, {10, -20, 30, -40, 50, -60, 70, -80}));
  SetAttr(model.Node("QLinearConv", {"x", "s", "z", "w1", "ws", "wz", "s", "z", "b"}, {"c1"}), "pads",
          std::vector<int64_t>{1, 1, 1, 1});
  model.Node("QLinearConv", {"c1", "s", "z", "w2", "ws", "wz", "s", "z"}, {"c2"});
  model.Node("QLinearAdd", {"c1", "s", "z", "c2", "s", "z", "s", "z"}, {"a"}).set_domain(kMsDomain);
  auto& pool = model.Node("MaxPool", {"a"}, {"m"});
  SetAttr(pool, "kernel_shape", std::vector<int64_t>{3, 3});
  SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
  model.Node("QLinearGlobalAveragePool", {"m", "s", "z", "s", "z"}, {"g"}).set_domain(kMsDomain);
  auto& cat = model.Node("QLinearConcat", {"s", "z", "c1", "s", "z", "c2", "s", "z"}, {"cat"});
  cat.set_domain(kMsDomain);
  SetAttr(cat, "axis", int64_t{1});
  model.Output("m", DataType::kUint8, {1, 8, 3, 3});
  model.Output("g", DataType::kUint8, {1, 8, 1, 1});
  model.Output("cat", DataType::kUint8, {1, 16, 7, 7});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".", ms = std::string(kMsDomain) + ".";
  EXPECT_EQ(Ops(), (Names{"Transpose", d + "QLinearConvNhwc", d + "QLinearConvNhwc", ms + "QLinearAdd",
                          d + "MaxPoolNhwc", "Transpose", ms + "QLinearGlobalAveragePool", "Transpose",
                          ms + "QLinearConcat", "Transpose"}));
  Tensor x(DataType::kUint8, {1, 6, 7, 7});
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 29 + 3);
  ExpectSameOutputs({{"x", x}}, 0.0);
}

// QLinearConv -> channel shuffle (Reshape, Transpose, Reshape) -> QLinearConv: the shuffle runs
// channels-last inside the region when its first Reshape splits the channels (`split`); a
// Reshape that splits something else leaves it plain, with Transposes around it. The same bytes
// either way.
class ChannelsLastShuffleTest : public RulesTest {
 protected:
  void Shuffle(const std::vector<int64_t>& split) {
    model.Input("x", DataType::kUint8, {1, 6, 7, 7});
    for (auto [name, shape] : {std::pair<const char*, std::vector<int64_t>>{"w1", {8, 6, 3, 3}}, {"w2", {8, 8, 1, 1}}}) {
      Tensor w(DataType::kInt8, shape);
      for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 13 + shape[1]) % 61 - 30);
      model.Initializer(name, w);
    }
    model.Initializer("s", Tensor::Scalar<float>(0.05f));
    model.Initializer("z", Tensor::Scalar<uint8_t>(100));
    model.Initializer("wz", Tensor::Scalar<int8_t>(0));
    model.Initializer("split", Tensor::FromVector<int64_t>({5}, split));
    model.Initializer("merged", Tensor::FromVector<int64_t>({4}, {split[0], -1, 7, 7}));
    SetAttr(model.Node("QLinearConv", {"x", "s", "z", "w1", "s", "wz", "s", "z"}, {"c1"}), "pads",
            std::vector<int64_t>{1, 1, 1, 1});
    model.Node("Reshape", {"c1", "split"}, {"r1"});
    SetAttr(model.Node("Transpose", {"r1"}, {"t"}), "perm", std::vector<int64_t>{0, 2, 1, 3, 4});
    model.Node("Reshape", {"t", "merged"}, {"r2"});
    model.Node("QLinearConv", {"r2", "s", "z", "w2", "s", "wz", "s", "z"}, {"y"});
    model.Output("y", DataType::kUint8, {1, 8, 7, 7});
  }
  void ExpectSameBytes() {
    Tensor x(DataType::kUint8, {1, 6, 7, 7});
    for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 29 + 3);
    ExpectSameOutputs({{"x", x}}, 0.0);
  }
  const std::string d = std::string(kOnnxflowDomain) + ".";
};

TEST_F(ChannelsLastShuffleTest, AChannelShuffleStaysInTheRegion) {
  Shuffle({1, 2, 4, 7, 7});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Transpose", d + "QLinearConvNhwc", "Reshape", "Transpose", "Reshape", d + "QLinearConvNhwc",
                          "Transpose"}));
  ExpectSameBytes();
}

TEST_F(ChannelsLastShuffleTest, ABatchCopiedByZeroAndAnySpatialSplitToo) {
  Shuffle({0, 4, 2, 49, 1});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Transpose", d + "QLinearConvNhwc", "Reshape", "Transpose", "Reshape", d + "QLinearConvNhwc",
                          "Transpose"}));
  ExpectSameBytes();
}

TEST_F(ChannelsLastShuffleTest, ASplitOfSomethingElseStaysPlain) {
  Shuffle({1, 4, 14, 7, 1});  // 4 x 14 is not the 8 channels
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Transpose", d + "QLinearConvNhwc", "Transpose", "Reshape", "Transpose", "Reshape",
                          "Transpose", d + "QLinearConvNhwc", "Transpose"}));
  ExpectSameBytes();
}

// A 1-D QLinearConv keeps the plain kernel: nothing changes.
TEST_F(RulesTest, ChannelsLastQuantLeavesA1DConv) {
  model.Input("x", DataType::kUint8, {1, 4, 9});
  Tensor w(DataType::kInt8, {4, 4, 3});
  for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>(i % 7 - 3);
  model.Initializer("w", w);
  model.Initializer("s", Tensor::Scalar<float>(0.05f));
  model.Initializer("z", Tensor::Scalar<uint8_t>(100));
  model.Initializer("wz", Tensor::Scalar<int8_t>(0));
  model.Node("QLinearConv", {"x", "s", "z", "w", "s", "wz", "s", "z"}, {"y"});
  model.Output("y", DataType::kUint8, {1, 4, 7});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"QLinearConv"}));
}

// A depthwise QLinearConv (one input and one output channel per group) runs channels-last, on the
// depthwise kernel, with the plain kernel's results; a channel multiplier of 2 and a narrow group
// (4 input channels) keep the plain kernel.
TEST_F(RulesTest, ChannelsLastQuantConvertsADepthwiseConv) {
  model.Input("x", DataType::kUint8, {1, 8, 5, 5});
  auto weights = [&](const char* name, Shape shape) {
    Tensor w(DataType::kInt8, shape);
    for (int64_t i = 0; i < w.size(); ++i) w.mutable_data<int8_t>()[i] = static_cast<int8_t>(i % 7 - 3);
    model.Initializer(name, w);
  };
  weights("w", {8, 1, 3, 3});
  weights("w2", {16, 1, 3, 3});
  weights("w4", {8, 4, 3, 3});
  model.Initializer("s", Tensor::Scalar<float>(0.05f));
  model.Initializer("z", Tensor::Scalar<uint8_t>(100));
  model.Initializer("wz", Tensor::Scalar<int8_t>(0));
  SetAttr(model.Node("QLinearConv", {"x", "s", "z", "w", "s", "wz", "s", "z"}, {"y"}), "group", int64_t{8});
  SetAttr(model.Node("QLinearConv", {"x", "s", "z", "w2", "s", "wz", "s", "z"}, {"y2"}), "group", int64_t{8});
  SetAttr(model.Node("QLinearConv", {"x", "s", "z", "w4", "s", "wz", "s", "z"}, {"y4"}), "group", int64_t{2});
  model.Output("y", DataType::kUint8, {1, 8, 3, 3});
  model.Output("y2", DataType::kUint8, {1, 16, 3, 3});
  model.Output("y4", DataType::kUint8, {1, 8, 3, 3});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{"Transpose", d + "QLinearConvNhwc", "Transpose", "QLinearConv", "QLinearConv"}));
  Tensor x(DataType::kUint8, {1, 8, 5, 5});
  for (int64_t i = 0; i < x.size(); ++i) x.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 29 + 3);
  ExpectSameOutputs({{"x", x}}, 0.0);
}

// The blocked layout, then its rules: two 16-channel convolutions joined by a channel Concat write
// into one tensor; a normalization takes the Relu after it.
TEST_F(RulesTest, BlockedLayoutAndItsRules) {
  ConvFromX();
  model.Initializer("w2", Floats({16, 4, 1, 1}, 4));
  model.Node("Conv", {"x", "w2"}, {"c2"}, "conv2");
  SetAttr(model.Node("Concat", {"c", "c2"}, {"cat"}), "axis", int64_t{1});
  for (const char* p : {"scale", "bias", "mean"}) model.Initializer(p, Floats({32}, 5));
  Tensor var = Floats({32}, 6);
  for (int64_t i = 0; i < 32; ++i) var.mutable_data<float>()[i] += 1.5f;
  model.Initializer("var", var);
  model.Node("BatchNormalization", {"cat", "scale", "bias", "mean", "var"}, {"n"});
  model.Node("Relu", {"n"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 32, 6, 6});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  // Stem convolutions (4 input channels) read x as it is; the Concat is gone, the Relu too.
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedConv", d + "BlockedBatchNormalization", d + "FromBlocked"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

// ONNX Runtime's com.microsoft activations of one input between convolutions (QuickGelu with an
// alpha no epilogue takes) run on the blocked values: no reorder around them.
TEST_F(QuickGeluRulesTest, BlockedBetweenConvolutions) {
  ConvThenQuickGelu(1.702f);
  model.Initializer("w2", Floats({16, 16, 1, 1}, 4));
  model.Node("Conv", {"y", "w2"}, {"z"}, "conv2");
  model.Output("z", DataType::kFloat, {1, 16, 6, 6});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", std::string(kMsDomain) + ".QuickGelu", d + "FromBlocked",
                          d + "BlockedConv", d + "FromBlocked"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

// A U-Net's upsampling path stays blocked: Resize to a skip connection's size (PyTorch's
// interpolate(x, size=...): sizes = Concat(Slice(Shape(x), 0, 2), [h, w]), x behind a Cast to
// float, as a half model keeps its Resizes in float) becomes BlockedResize, its Shape BlockedShape,
// and the Concat with the skip connection and the Conv after it read blocked values: no reorder
// between the first Conv and the output. Bilinear (half_pixel) and nearest (asymmetric, floor,
// constant scales) compute what Resize does (the blocked bilinear row has the plain one's bits:
// resize_test.cc; the blocked convolutions sum in another order, hence the tolerance).
class BlockedResizeTest : public RulesTest {
 protected:
  // c [1, 16, 6, 6] -> Resize -> "up" [1, 16, 12, 12]; Concat with a Conv of the larger "x2"; Conv.
  void UpsampleAndJoin(bool bilinear) {
    ConvFromX();
    model.Input("x2", DataType::kFloat, {1, 4, 12, 12});
    model.Initializer("w2", Floats({16, 4, 3, 3}, 4));
    SetAttr(model.Node("Conv", {"x2", "w2"}, {"skip"}, "conv2"), "pads", std::vector<int64_t>{1, 1, 1, 1});
    SetAttr(model.Node("Cast", {"c"}, {"cf"}), "to", int64_t{onnx::TensorProto::FLOAT});
    if (bilinear) {
      model.Node("Shape", {"c"}, {"shape"});
      model.Initializer("zero", Tensor::FromVector<int64_t>({1}, {0}));
      model.Initializer("two", Tensor::FromVector<int64_t>({1}, {2}));
      model.Initializer("hw", Tensor::FromVector<int64_t>({2}, {12, 12}));
      model.Node("Slice", {"shape", "zero", "two", "zero"}, {"nc"});
      SetAttr(model.Node("Concat", {"nc", "hw"}, {"sizes"}), "axis", int64_t{0});
      auto& resize = model.Node("Resize", {"cf", "", "", "sizes"}, {"up"});
      SetAttr(resize, "mode", std::string("linear"));
    } else {
      model.Initializer("scales", Tensor::FromVector<float>({4}, {1, 1, 2, 2}));
      auto& resize = model.Node("Resize", {"cf", "", "scales"}, {"up"});
      SetAttr(resize, "coordinate_transformation_mode", std::string("asymmetric"));
      SetAttr(resize, "nearest_mode", std::string("floor"));
    }
    SetAttr(model.Node("Concat", {"up", "skip"}, {"cat"}), "axis", int64_t{1});
    model.Initializer("w3", Floats({16, 32, 1, 1}, 5));
    model.Node("Conv", {"cat", "w3"}, {"y"}, "conv3");
    model.Output("y", DataType::kFloat, {1, 16, 12, 12});
  }
  std::vector<NamedValue> Inputs() { return {Input("x", {1, 4, 6, 6}), Input("x2", {1, 4, 12, 12}, 7)}; }
};

TEST_F(BlockedResizeTest, BilinearToASkipConnectionsSize) {
  UpsampleAndJoin(true);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedConv", "Cast", d + "BlockedShape", "Slice", "Concat",
                          d + "BlockedResize", "Concat", d + "BlockedConv", d + "FromBlocked"}));
  ExpectSameOutputs(Inputs(), 1e-3);
}

TEST_F(BlockedResizeTest, NearestByConstantScales) {
  UpsampleAndJoin(false);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Only("BlockedResize").domain, kOnnxflowDomain);
  ExpectSameOutputs(Inputs(), 1e-3);
}

// Scales that resize the channels too, and cubic interpolation, keep the plain Resize.
TEST_F(BlockedResizeTest, OtherResizesStayPlain) {
  ConvFromX();
  model.Initializer("scales", Tensor::FromVector<float>({4}, {1, 2, 2, 2}));
  model.Node("Resize", {"c", "", "scales"}, {"y"});
  model.Initializer("spatial", Tensor::FromVector<float>({4}, {1, 1, 2, 2}));
  SetAttr(model.Node("Resize", {"c", "", "spatial"}, {"y2"}), "mode", std::string("cubic"));
  model.Output("y", DataType::kFloat, {1, 32, 12, 12});
  model.Output("y2", DataType::kFloat, {1, 16, 12, 12});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "FromBlocked", "Resize", "Resize"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

// A BatchNormalization of a blocked value followed by a per-channel Mul (both blocked
// normalizations after the layout) is one normalization.
// YOLOv8's C2f: a Conv's output split in halves over the channels, a Conv on one half, and the
// halves and that joined again. Halves of whole blocks split the blocks (no reorder in the region);
// a split that cuts a block (24 + 8) leaves the Split plain, with a reorder before it.
class BlockedSplitTest : public RulesTest {
 protected:
  void SplitAndJoin(const std::vector<int64_t>& halves) {
    ConvFromX(32);
    model.Initializer("halves", Tensor::FromVector<int64_t>({2}, halves));
    SetAttr(model.Node("Split", {"c", "halves"}, {"s0", "s1"}), "axis", int64_t{1});
    model.Initializer("w2", Floats({16, halves[1], 3, 3}, 4));
    SetAttr(model.Node("Conv", {"s1", "w2"}, {"s2"}, "conv2"), "pads", std::vector<int64_t>{1, 1, 1, 1});
    SetAttr(model.Node("Concat", {"s0", "s1", "s2"}, {"cat"}), "axis", int64_t{1});
    model.Initializer("w3", Floats({16, halves[0] + halves[1] + 16, 1, 1}, 5));
    model.Node("Conv", {"cat", "w3"}, {"y"}, "conv3");
    model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  }
};

TEST_F(BlockedSplitTest, HalvesOfWholeBlocksSplitTheBlocks) {
  SplitAndJoin({16, 16});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", "Split", d + "BlockedConv", "Concat", d + "BlockedConv", d + "FromBlocked"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-3);
}

TEST_F(BlockedSplitTest, ASplitThatCutsABlockStaysPlain) {
  SplitAndJoin({24, 8});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::vector<std::string> ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Split"), 1);
  // Before the Split, after conv2 for the Concat that now stays plain, and before the output.
  EXPECT_EQ(std::count(ops.begin(), ops.end(), std::string(kOnnxflowDomain) + ".FromBlocked"), 3);
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-3);
}

// A model ONNX Runtime saved at its extended level: com.microsoft FusedConv with its activation's
// parameters in `activation_params`, the second with the residual Add as its fourth input. Each
// becomes the internal FusedConv with the epilogue's alpha and beta, and the blocked layout then
// takes them as it takes the exported Conv -> LeakyRelu; the com.microsoft kernels compute the
// reference. An activation no epilogue computes stays with its com.microsoft kernel.
class SavedFusedConvTest : public RulesTest {
 protected:
  onnx::NodeProto& SavedConv(const std::vector<std::string>& inputs, const std::string& y, const std::string& act,
                             const std::vector<float>& params) {
    onnx::NodeProto& n = model.Node("FusedConv", inputs, {y});
    n.set_domain(kMsDomain);
    SetAttr(n, "pads", std::vector<int64_t>{1, 1, 1, 1});
    SetAttr(n, "activation", act);
    if (!params.empty()) SetAttribute(n, "activation_params", params);
    return n;
  }
  void SetUp() override {
    model.proto().add_opset_import()->set_domain(kMsDomain);
    model.proto().mutable_opset_import(1)->set_version(1);
    model.Input("x", DataType::kFloat, {1, 4, 6, 6});
    model.Initializer("w", Floats({16, 4, 3, 3}, 2));
    model.Initializer("b", Floats({16}, 3));
    model.Initializer("w2", Floats({16, 16, 3, 3}, 4));
    SavedConv({"x", "w", "b"}, "c", "LeakyRelu", {0.25f});
  }
};

TEST_F(SavedFusedConvTest, BecomesTheInternalOpAndGoesBlocked) {
  SavedConv({"c", "w2", "", "c"}, "y", "Clip", {0.0f, 0.5f});
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("AdoptSavedFusedConv", AdoptSavedFusedConv), 2);
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{d + "FusedConv", d + "FusedConv"}));
  const Node& first = graph().nodes[graph().nodes.Order()[0]];
  EXPECT_EQ(Attr(*first.proto, "activation")->s(), "LeakyRelu");
  EXPECT_FLOAT_EQ(Attr(*first.proto, "activation_alpha")->f(), 0.25f);
  EXPECT_EQ(Attr(*first.proto, "activation_params"), nullptr);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedConv", d + "FromBlocked"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-3);  // the blocked sums run in another order
}

TEST_F(SavedFusedConvTest, AnActivationNoEpilogueComputesStays) {
  SavedConv({"c", "w2"}, "y", "Softplus", {});
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  EXPECT_EQ(Run("AdoptSavedFusedConv", AdoptSavedFusedConv), 1);
  EXPECT_EQ(Ops(), (Names{std::string(kOnnxflowDomain) + ".FusedConv", std::string(kMsDomain) + ".FusedConv"}));
}

// ONNX Runtime saves every Shape with start = 0: the same values as a plain Shape, which the rules
// reading shapes at run time match. A start other than 0, or an end, keeps its attributes.
TEST_F(RulesTest, DropShapeStartZero) {
  model.Input("x", DataType::kFloat, {2, 3, 4});
  SetAttr(model.Node("Shape", {"x"}, {"all"}), "start", int64_t{0});
  SetAttr(model.Node("Shape", {"x"}, {"tail"}), "start", int64_t{1});
  onnx::NodeProto& head = model.Node("Shape", {"x"}, {"head"});
  SetAttr(head, "start", int64_t{0});
  SetAttr(head, "end", int64_t{2});
  for (const char* y : {"all", "tail", "head"}) model.Output(y, DataType::kInt64, {-1});
  EXPECT_EQ(Run("DropShapeStartZero", DropShapeStartZero), 1);
  int with_start = 0;
  for (const Node& n : graph().nodes) with_start += Attr(*n.proto, "start") != nullptr;
  EXPECT_EQ(with_start, 2);
  ExpectSameOutputs({Input("x", {2, 3, 4})});
}

TEST_F(RulesTest, MergeNormalizationsAfterTheLayout) {
  ConvFromX();
  model.Node("Relu", {"c"}, {"r"});  // keeps the normalization out of the convolution's weights
  for (const char* p : {"scale", "bias", "mean"}) model.Initializer(p, Floats({16}, 5));
  Tensor var = Floats({16}, 6);
  for (int64_t i = 0; i < 16; ++i) var.mutable_data<float>()[i] += 1.5f;
  model.Initializer("var", var);
  model.Initializer("s", Floats({1, 16, 1, 1}, 7));
  model.Node("BatchNormalization", {"r", "scale", "bias", "mean", "var"}, {"n"});
  model.Node("Mul", {"n", "s"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", "Relu", d + "BlockedBatchNormalization", d + "FromBlocked"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

// MobileNetV3's block stays blocked from end to end: HardSwish is the epilogue of the
// convolutions, the 5x5 depthwise one reads the blocked value, and squeeze-and-excitation
// (GlobalAveragePool -> Conv -> Relu -> Conv -> HardSigmoid -> Mul by the gate) runs on blocks,
// pad lanes included (24 channels).
TEST_F(RulesTest, SqueezeAndExcitationStaysBlocked) {
  ConvFromX(24);
  model.Node("HardSwish", {"c"}, {"h"});
  model.Initializer("dw", Floats({24, 1, 5, 5}, 4));
  model.Initializer("db", Floats({24}, 5));
  onnx::NodeProto& dw = model.Node("Conv", {"h", "dw", "db"}, {"d"}, "depthwise");
  SetAttr(dw, "group", int64_t{24});
  SetAttr(dw, "pads", std::vector<int64_t>{2, 2, 2, 2});
  model.Node("HardSwish", {"d"}, {"dh"});
  model.Node("GlobalAveragePool", {"dh"}, {"s"});
  model.Initializer("w1", Floats({16, 24, 1, 1}, 6));
  model.Initializer("b1", Floats({16}, 7));
  model.Node("Conv", {"s", "w1", "b1"}, {"s1"}, "reduce");
  model.Node("Relu", {"s1"}, {"r1"});
  model.Initializer("w2", Floats({24, 16, 1, 1}, 8));
  model.Initializer("b2", Floats({24}, 9));
  model.Node("Conv", {"r1", "w2", "b2"}, {"s2"}, "expand");
  onnx::NodeProto& gate = model.Node("HardSigmoid", {"s2"}, {"g"});
  SetAttr(gate, "alpha", 1.0f / 6);
  model.Node("Mul", {"dh", "g"}, {"m"});
  model.Initializer("w3", Floats({16, 24, 1, 1}, 10));
  model.Node("Conv", {"m", "w3"}, {"y"}, "project");
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  ASSERT_TRUE(FuseForInference(&graph()).ok());
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  // The gate's Mul goes into the projection (graph/channel_scale_fusion.h).
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedDepthwiseConv", d + "BlockedGlobalAveragePool",
                          d + "BlockedConv", d + "BlockedConv", d + "BlockedConv", d + "FromBlocked"}));
  ExpectSameOutputs({Input("x", {1, 4, 6, 6})}, 1e-4);
}

TEST_F(RulesTest, FoldConstantsReplacesANodeByItsValue) {
  model.Input("x", DataType::kFloat, {3});
  model.Initializer("a", Tensor::FromVector<float>({3}, {1, 2, 3}));
  model.Node("Neg", {"a"}, {"na"});
  model.Node("Add", {"x", "na"}, {"y"});
  model.Output("y", DataType::kFloat, {3});
  ASSERT_TRUE(FoldConstants(&graph(), GlobalKernelRegistry(), SessionLimits{}).ok());
  EXPECT_EQ(Ops(), (Names{"Add"}));
  EXPECT_EQ(graph().constants.at("na").data<float>()[2], -3.0f);
}

// What a scope folds reaches the subgraphs that read it, and they fold with it: an LSTM weight
// Sliced in a nested branch from a Constant node of the main graph (Silero VAD's form) is a
// constant there after one FoldConstants, not a Slice run at every step.
TEST_F(RulesTest, FoldConstantsReachesNestedBranches) {
  model.Input("x", DataType::kFloat, {2});
  model.Input("c", DataType::kBool, {});
  model.Initializer("starts", Tensor::FromVector<int64_t>({1}, {1}));
  model.Initializer("ends", Tensor::FromVector<int64_t>({1}, {3}));
  model.Initializer("a", Tensor::FromVector<float>({4}, {1, 2, 3, 4}));
  model.Node("Neg", {"a"}, {"na"});  // folded in the main graph
  auto& outer = model.Node("If", {"c"}, {"y"}, "outer");
  tools::GraphBuilder then_branch = tools::SetGraphAttr(outer, "then_branch");
  auto& inner = then_branch.Node("If", {"c"}, {"t_y"}, "inner");
  tools::GraphBuilder inner_then = tools::SetGraphAttr(inner, "then_branch");
  inner_then.Node("Slice", {"na", "starts", "ends"}, {"w"});
  inner_then.Node("Add", {"x", "w"}, {"i_y"});
  inner_then.Output("i_y", DataType::kFloat, {2});
  tools::GraphBuilder inner_else = tools::SetGraphAttr(inner, "else_branch");
  inner_else.Node("Identity", {"x"}, {"ie_y"});
  inner_else.Output("ie_y", DataType::kFloat, {2});
  then_branch.Output("t_y", DataType::kFloat, {2});
  tools::GraphBuilder else_branch = tools::SetGraphAttr(outer, "else_branch");
  else_branch.Node("Identity", {"x"}, {"e_y"});
  else_branch.Output("e_y", DataType::kFloat, {2});
  model.Output("y", DataType::kFloat, {2});

  ASSERT_TRUE(FoldConstants(&graph(), GlobalKernelRegistry(), SessionLimits{}).ok());
  const Graph& then_graph = *Only("If").subgraphs.at("then_branch");
  const Graph& inner_then_graph = *then_graph.nodes.begin()->subgraphs.at("then_branch");
  std::vector<std::string> ops;
  for (const Node& n : inner_then_graph.nodes) ops.push_back(n.op_type());
  EXPECT_EQ(ops, (Names{"Add"}));
  ASSERT_TRUE(inner_then_graph.constants.count("w"));
  EXPECT_EQ(inner_then_graph.constants.at("w").data<float>()[1], -3.0f);
  for (bool c : {true, false}) ExpectSameOutputs({Input("x", {2}), {"c", Tensor::Scalar<bool>(c)}});
}

TEST_F(RulesTest, RemoveDeadNodesInOneWalk) {
  model.Input("x", DataType::kFloat, {3});
  model.Node("Relu", {"x"}, {"y"});
  model.Node("Exp", {"x"}, {"e"});
  model.Node("Neg", {"e"}, {"unread"});
  model.Output("y", DataType::kFloat, {3});
  RemoveDeadNodes(&graph());
  EXPECT_EQ(Ops(), (Names{"Relu"}));
}

// The driver refuses a patch that would leave the graph invalid, naming the rule.
TEST_F(RulesTest, DriverRefusesAPatchThatDropsAReadValue) {
  model.Input("x", DataType::kFloat, {3});
  model.Node("Relu", {"x"}, {"r"});
  model.Node("Neg", {"r"}, {"y"});
  model.Output("y", DataType::kFloat, {3});
  const Status s = RunRule(&graph(), "BrokenRule", [](Rewriter& r, NodeGraph::Id id) -> std::optional<Patch> {
    if (r[id].op_type() != "Relu") return std::nullopt;
    return Patch{{id}, {}, {}};
  });
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("'BrokenRule': drops 'r'"), std::string::npos) << s.message();
}

TEST_F(RulesTest, DriverRefusesAValueWrittenTwiceAndAnUndefinedInput) {
  model.Input("x", DataType::kFloat, {3});
  model.Node("Relu", {"x"}, {"r"});
  model.Node("Neg", {"r"}, {"y"});
  model.Output("y", DataType::kFloat, {3});
  auto make = [](const std::string& in, const std::string& out) {
    auto p = std::make_shared<onnx::NodeProto>();
    p->set_op_type("Abs");
    p->add_input(in);
    p->add_output(out);
    return Node{p, "", 17, {}, {}};
  };
  Status twice = RunRule(&graph(), "Twice", [&](Rewriter& r, NodeGraph::Id id) -> std::optional<Patch> {
    if (r[id].op_type() != "Relu") return std::nullopt;
    return Patch{{}, {make("x", "y")}, {}};  // y is the Neg's
  });
  EXPECT_NE(twice.message().find("writes 'y', which another node writes"), std::string::npos) << twice.message();
  Status undefined = RunRule(&graph(), "Undefined", [&](Rewriter& r, NodeGraph::Id id) -> std::optional<Patch> {
    if (r[id].op_type() != "Relu") return std::nullopt;
    return Patch{{id}, {make("nowhere", "r")}, {}};
  });
  EXPECT_NE(undefined.message().find("reads 'nowhere', which nothing defines"), std::string::npos)
      << undefined.message();
}

TEST_F(RulesTest, DriverRefusesATypeThatContradictsTheLoad) {
  model.Input("x", DataType::kFloat, {3});
  model.Node("Relu", {"x"}, {"y"});
  model.Output("y", DataType::kFloat, {3});
  Status s = RunRule(&graph(), "Retype", [](Rewriter& r, NodeGraph::Id id) -> std::optional<Patch> {
    Patch p{{id}, {r[id]}, {}};
    p.types.emplace_back("y", DataType::kInt8);
    return p;
  });
  EXPECT_NE(s.message().find("gives 'y' type int8"), std::string::npos) << s.message();
}

// The IR keeps the file's order where the edges allow it, and refuses a cycle a rule would close.
TEST_F(RulesTest, OrderFollowsTheFileAndTheEdges) {
  model.Input("x", DataType::kFloat, {3});
  model.Node("Neg", {"a"}, {"y"}, "reads_later_value");
  model.Node("Relu", {"x"}, {"a"}, "writes_it");
  model.Node("Exp", {"x"}, {"z"}, "independent");
  model.Output("y", DataType::kFloat, {3});
  model.Output("z", DataType::kFloat, {3});
  EXPECT_EQ(Ops(), (Names{"Relu", "Neg", "Exp"}));
  Status s = RunRule(&graph(), "Loop", [](Rewriter& r, NodeGraph::Id id) -> std::optional<Patch> {
    if (r[id].op_type() != "Relu") return std::nullopt;
    auto p = std::make_shared<onnx::NodeProto>(*r[id].proto);
    p->set_input(0, "y");  // Relu(y) -> a -> Neg -> y
    return Patch{{id}, {WithProto(r[id], p)}, {}};
  });
  EXPECT_NE(s.message().find("'Loop' closed a cycle"), std::string::npos) << s.message();
}

}  // namespace
}  // namespace onnxflow::graph
