// q, k and v read packed from one projection by FusedAttention, by the two routes there: the three
// projections of an exported attention merged into one product (MergeQkvProjections,
// graph/qkv_merge.h), for the heads shapes exporters write, and the one qkv projection that timm's
// ViT and others unbind (FuseAttention, graph/attention_fusion.h). Near misses stay as they were.
// Each case computes what the unoptimized model computes.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <tuple>
#include <vector>

#include "graph/attention_fusion.h"
#include "graph/fusion.h"
#include "graph/graph_test.h"
#include "graph/qkv_merge.h"
#include "ops/framework/domains.h"
#include "ops/framework/numeric.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;
using Names = std::vector<std::string>;

constexpr int64_t kTokens = 5, kHeads = 2, kHeadSize = 4, kHidden = kHeads * kHeadSize;


// How a projection's heads shape is written.
enum class HeadsShape {
  kConstant,         // [0, 0, N, D]
  kGathersOfP,       // Concat(Unsqueeze(Gather(Shape(P), 0)), Unsqueeze(Gather(Shape(P), 1)), [N], [D])
  kSliceOfP,         // Concat(Slice(Shape(P), 0, -1), [N, D])
  kGathersOfX,       // as kGathersOfP, of the projected input
};

class QkvMergeTest : public GraphTest {
 protected:
  // x [1, T, H] -> three projections (MatMul, Add bias when `biased`, except for `no_bias`) of
  // `inputs[i]`, each reshaped into heads as `shape` says -> Transposes -> softmax(Q K^T / sqrt(D) +
  // mask) V -> back to BSND.
  void Build(HeadsShape shape, bool all_biased = true, const std::vector<std::string>& inputs = {"x", "x", "x"},
             const std::vector<int64_t>& heads_shape = {0, 0, kHeads, kHeadSize}, const std::string& no_bias = "") {
    model.Input("x", DataType::kFloat, {1, kTokens, kHidden});
    if (inputs[2] != "x") model.Input(inputs[2], DataType::kFloat, {1, kTokens, kHidden});
    model.Input("mask", DataType::kFloat, {1, 1, 1, kTokens});
    model.Initializer("heads_shape", Tensor::FromVector<int64_t>({4}, heads_shape));
    model.Initializer("n", Tensor::FromVector<int64_t>({1}, {kHeads}));
    model.Initializer("d", Tensor::FromVector<int64_t>({1}, {kHeadSize}));
    model.Initializer("nd", Tensor::FromVector<int64_t>({2}, {kHeads, kHeadSize}));
    model.Initializer("zero", Tensor::FromVector<int64_t>({1}, {0}));
    model.Initializer("one", Tensor::FromVector<int64_t>({1}, {1}));
    model.Initializer("minus_one", Tensor::FromVector<int64_t>({1}, {-1}));
    model.Initializer("root", Tensor::Scalar<float>(std::sqrt(static_cast<float>(kHeadSize))));
    const char* names[] = {"q", "k", "v"};
    for (int i = 0; i < 3; ++i) {
      const std::string p = names[i];
      const bool biased = all_biased && p != no_bias;
      model.Initializer(p + "_w", Floats({kHidden, kHidden}, 3 + i));
      model.Node("MatMul", {inputs[i], p + "_w"}, {biased ? p + "_mm" : p + "_p"});
      if (biased) {
        model.Initializer(p + "_b", Floats({kHidden}, 7 + i));
        model.Node("Add", {p + "_mm", p + "_b"}, {p + "_p"});
      }
      std::string target = "heads_shape";
      if (shape != HeadsShape::kConstant) {
        const std::string of = shape == HeadsShape::kGathersOfX ? inputs[i] : p + "_p";
        model.Node("Shape", {of}, {p + "_shape"});
        target = p + "_target";
        if (shape == HeadsShape::kSliceOfP) {
          model.Node("Slice", {p + "_shape", "zero", "minus_one"}, {p + "_lead"});
          SetAttr(model.Node("Concat", {p + "_lead", "nd"}, {target}), "axis", int64_t{0});
        } else {
          for (const char* axis : {"zero", "one"}) {
            const std::string dim = p + "_dim" + axis;
            model.Node("Gather", {p + "_shape", axis}, {dim});
          }
          SetAttr(model.Node("Concat", {p + "_dimzero", p + "_dimone", "n", "d"}, {target}), "axis", int64_t{0});
        }
      }
      model.Node("Reshape", {p + "_p", target}, {p + "_heads"});
    }
    SetAttr(model.Node("Transpose", {"q_heads"}, {"qt"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    SetAttr(model.Node("Transpose", {"k_heads"}, {"kt"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
    SetAttr(model.Node("Transpose", {"v_heads"}, {"vt"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    model.Node("MatMul", {"qt", "kt"}, {"scores"});
    model.Node("Div", {"scores", "root"}, {"scaled"});
    model.Node("Add", {"scaled", "mask"}, {"masked"});
    SetAttr(model.Node("Softmax", {"masked"}, {"probs"}), "axis", int64_t{-1});
    model.Node("MatMul", {"probs", "vt"}, {"ctx"});
    SetAttr(model.Node("Transpose", {"ctx"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    model.Output("y", DataType::kFloat, {1, kTokens, kHeads, kHeadSize});
  }

  // FuseAttention and FuseMatMulBias, as FuseForInference runs them before the merge.
  void FuseAttentionAndBiases(int biases) {
    ASSERT_EQ(Run("FuseAttention", FuseAttention), 1);
    ASSERT_EQ(Run("FuseMatMulBias", FuseMatMulBias), biases);
  }

  std::vector<NamedValue> Inputs(const std::string& other = "") {
    Tensor mask(DataType::kFloat, {1, 1, 1, kTokens});
    for (int64_t i = 0; i < kTokens; ++i) mask.mutable_data<float>()[i] = i == 3 ? -10000.0f : 0.0f;
    std::vector<NamedValue> in = {{"x", Floats({1, kTokens, kHidden}, 1)}, {"mask", mask}};
    if (!other.empty()) in.push_back({other, Floats({1, kTokens, kHidden}, 2)});
    return in;
  }

  const std::string fused_ = std::string(kOnnxflowDomain) + ".";
  // The heads shape an export reads off the projection (x.size()[:-1] + (N, D)) or off its input:
  // a Shape of the projection reads x instead, as Concat(Slice(Shape(x), 0, -1), [H]).
  void ExpectMergedReadingShapesOfX(HeadsShape shape) {
    Build(shape);
    FuseAttentionAndBiases(3);
    EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 1);
    int shapes = 0, attentions = 0, products = 0;
    for (const Node& n : graph().nodes) {
      shapes += n.op_type() == "Shape";
      attentions += n.op_type() == "FusedAttention";
      products += n.op_type() == "FusedMatMul";
      if (n.op_type() == "Shape") {
        EXPECT_EQ(n.proto->input(0), "x");
      }
    }
    EXPECT_EQ(shapes, 3);
    EXPECT_EQ(attentions, 1);
    EXPECT_EQ(products, 1);
    ExpectSameOutputs(Inputs(), 1e-4);
  }
};

TEST_F(QkvMergeTest, MergesHeadsShapesGatheredOffTheProjection) { ExpectMergedReadingShapesOfX(HeadsShape::kGathersOfP); }
TEST_F(QkvMergeTest, MergesHeadsShapesSlicedOffTheProjection) { ExpectMergedReadingShapesOfX(HeadsShape::kSliceOfP); }
TEST_F(QkvMergeTest, MergesHeadsShapesGatheredOffTheInput) { ExpectMergedReadingShapesOfX(HeadsShape::kGathersOfX); }


TEST_F(QkvMergeTest, MergesTheProjectionsOfAConstantHeadsShape) {
  Build(HeadsShape::kConstant);
  FuseAttentionAndBiases(3);
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 1);
  EXPECT_EQ(Ops(), (Names{fused_ + "FusedMatMul", fused_ + "FusedAttention"}));
  // One product of the concatenated weights and biases, [H, 3H] and [3H]; the old weights are gone.
  const Node& product = Only("FusedMatMul");
  EXPECT_EQ(graph().constants.at(product.proto->input(1)).shape(), (Shape{kHidden, 3 * kHidden}));
  EXPECT_EQ(graph().constants.at(product.proto->input(2)).shape(), (Shape{3 * kHidden}));
  EXPECT_EQ(graph().constants.count("q_w") + graph().constants.count("v_b"), 0u);
  const Node& attention = Only("FusedAttention");
  EXPECT_EQ(attention.proto->input(0), product.proto->output(0));
  EXPECT_EQ(attention.proto->input(1), "");
  ExpectSameOutputs(Inputs(), 1e-4);
}

TEST_F(QkvMergeTest, MergesProductsWithoutBiases) {
  Build(HeadsShape::kConstant, false);
  FuseAttentionAndBiases(0);
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 1);
  EXPECT_EQ(Ops(), (Names{"MatMul", fused_ + "FusedAttention"}));
  ExpectSameOutputs(Inputs(), 1e-4);
}

// Whisper's attention: q and v projections with biases, k's without. Merged all the same, k's part
// of the packed bias zeros.
TEST_F(QkvMergeTest, MergesAProjectionWithoutBiasWithZeros) {
  Build(HeadsShape::kConstant, true, {"x", "x", "x"}, {0, 0, kHeads, kHeadSize}, "k");
  FuseAttentionAndBiases(2);
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 1);
  EXPECT_EQ(Ops(), (Names{fused_ + "FusedMatMul", fused_ + "FusedAttention"}));
  const Tensor& bias = graph().constants.at(Only("FusedMatMul").proto->input(2));
  ASSERT_EQ(bias.shape(), (Shape{3 * kHidden}));
  const Tensor q_b = Floats({kHidden}, 7), v_b = Floats({kHidden}, 9);
  for (int64_t c = 0; c < kHidden; ++c) {
    EXPECT_EQ(bias.data<float>()[c], q_b.data<float>()[c]);
    EXPECT_EQ(bias.data<float>()[kHidden + c], 0.0f);
    EXPECT_EQ(bias.data<float>()[2 * kHidden + c], v_b.data<float>()[c]);
  }
  ExpectSameOutputs(Inputs(), 1e-4);
}

// transformers' _shape(x, tgt_len, bsz) for q and _shape(x, -1, bsz) for k and v: the sequence
// entry copied in one and inferred in the others, the same rows. Merged.
TEST_F(QkvMergeTest, MergesSequenceEntriesCopiedOrInferred) {
  Build(HeadsShape::kConstant);
  model.Initializer("kv_heads_shape", Tensor::FromVector<int64_t>({4}, {0, -1, kHeads, kHeadSize}));
  for (auto& node : *model.proto().mutable_graph()->mutable_node()) {
    if (node.output(0) == "k_heads" || node.output(0) == "v_heads") node.set_input(1, "kv_heads_shape");
  }
  FuseAttentionAndBiases(3);
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 1);
  EXPECT_EQ(Ops(), (Names{fused_ + "FusedMatMul", fused_ + "FusedAttention"}));
  ExpectSameOutputs(Inputs(), 1e-4);
}

// A half model's projections (graph/half_compute.cc leaves their weights and biases in 16 bits for
// the kernel to widen): the joined weights and biases stay 16-bit, the three parts side by side.
TEST_F(QkvMergeTest, MergesHalfWeightsKeepingThemHalf) {
  Build(HeadsShape::kConstant);
  FuseAttentionAndBiases(3);
  for (const char* name : {"q_w", "k_w", "v_w", "q_b", "k_b", "v_b"}) {
    const Tensor f = graph().constants.at(name);
    Tensor h(DataType::kFloat16, f.shape());
    for (int64_t i = 0; i < f.size(); ++i) h.mutable_data<Float16>()[i] = Float16{FloatToHalf(f.data<float>()[i])};
    graph().constants[name] = h;
  }
  const Tensor k_w = graph().constants.at("k_w");
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 1);
  const Node& product = Only("FusedMatMul");
  const Tensor& w = graph().constants.at(product.proto->input(1));
  ASSERT_EQ(w.dtype(), DataType::kFloat16);
  ASSERT_EQ(w.shape(), (Shape{kHidden, 3 * kHidden}));
  EXPECT_EQ(graph().constants.at(product.proto->input(2)).dtype(), DataType::kFloat16);
  for (int64_t r = 0; r < kHidden; ++r) {
    for (int64_t c = 0; c < kHidden; ++c) {
      EXPECT_EQ(w.data<Float16>()[r * 3 * kHidden + kHidden + c].bits, k_w.data<Float16>()[r * kHidden + c].bits);
    }
  }
  // The unoptimized model has the float weights: the half ones are within their rounding.
  ExpectSameOutputs(Inputs(), 1e-2);
}

// One product of float weights, one of half: not one matrix.
TEST_F(QkvMergeTest, ProjectionsOfMixedWeightTypesStay) {
  Build(HeadsShape::kConstant);
  FuseAttentionAndBiases(3);
  const Tensor f = graph().constants.at("v_w");
  Tensor h(DataType::kFloat16, f.shape());
  for (int64_t i = 0; i < f.size(); ++i) h.mutable_data<Float16>()[i] = Float16{FloatToHalf(f.data<float>()[i])};
  graph().constants["v_w"] = h;
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 0);
}

TEST_F(QkvMergeTest, ProjectionsOfTwoInputsStay) {
  Build(HeadsShape::kConstant, true, {"x", "x", "memory"});
  FuseAttentionAndBiases(3);
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 0);
  ExpectSameOutputs(Inputs("memory"), 1e-4);
}

TEST_F(QkvMergeTest, AProductReadElsewhereStays) {
  Build(HeadsShape::kConstant);
  model.Output("k_p", DataType::kFloat, {1, kTokens, kHidden});  // the keys are also an output
  FuseAttentionAndBiases(3);
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 0);
  ExpectSameOutputs(Inputs(), 1e-4);
}

// Leading entries written as numbers (a static export's folded shapes) or -1: merged, the
// attention applies them to the packed rows as the Reshape did.
class QkvMergeLeadingEntriesTest : public QkvMergeTest, public ::testing::WithParamInterface<std::vector<int64_t>> {};

TEST_P(QkvMergeLeadingEntriesTest, MergeAsReshapeEntries) {
  const std::vector<int64_t>& lead = GetParam();
  Build(HeadsShape::kConstant, true, {"x", "x", "x"}, {lead[0], lead[1], kHeads, kHeadSize});
  FuseAttentionAndBiases(3);
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 1);
  ExpectSameOutputs(Inputs(), 1e-4);
}

INSTANTIATE_TEST_SUITE_P(Entries, QkvMergeLeadingEntriesTest,
                         ::testing::Values(std::vector<int64_t>{1, kTokens}, std::vector<int64_t>{1, -1},
                                           std::vector<int64_t>{-1, kTokens}, std::vector<int64_t>{0, -1}));

// Entries that do not fit the rows are refused at run time, as Reshape refuses them.
TEST_F(QkvMergeTest, EntriesThatDoNotFitTheRowsAreRefused) {
  Build(HeadsShape::kConstant, true, {"x", "x", "x"}, {2, -1, kHeads, kHeadSize});  // 5 tokens in 2 rows
  FuseAttentionAndBiases(3);
  EXPECT_EQ(Run("MergeQkvProjections", MergeQkvProjections), 1);
  auto session = Session::LoadFromBytes(model.Serialize());
  ASSERT_TRUE(session.ok()) << session.status().ToString();
  auto out = session->Run(Inputs());
  ASSERT_FALSE(out.ok());
  EXPECT_NE(out.status().message().find("is not (B, S) rows of 24"), std::string::npos) << out.status().message();
}

// timm's ViT attention: one qkv projection, qkv.reshape(B, S, 3, N, D).permute(2, 0, 3, 1, 4),
// unbound into q, k and v (Split + Squeeze, or three Gathers), q scaled, softmax(q k^T) v, back.
// kSplitFirst is the graph ONNX Runtime saves from it: its transpose optimizer splits the
// (B, S, 3, N, D) tensor on axis 2 first and transposes each part (k straight into K^T).
enum class Unbind { kSplit, kGathers, kSplitFirst };

class UnboundQkvTest : public GraphTest,
                       public ::testing::WithParamInterface<std::tuple<Unbind, std::vector<int64_t>, bool>> {
 protected:
  // `lead`: the Reshape's first two entries; empty: read off x's shape at run time.
  void Build(Unbind unbind, const std::vector<int64_t>& lead, bool sdpa_scales) {
    model.Input("x", DataType::kFloat, {1, kTokens, kHidden});
    model.Initializer("w", Floats({kHidden, 3 * kHidden}, 3));
    model.Initializer("b", Floats({3 * kHidden}, 4));
    model.Node("MatMul", {"x", "w"}, {"mm"});
    model.Node("Add", {"mm", "b"}, {"qkv"});
    std::string target = "shape5";
    if (lead.empty()) {
      model.Node("Shape", {"x"}, {"x_shape"});
      model.Initializer("zero", Tensor::Scalar<int64_t>(0));
      model.Initializer("one", Tensor::Scalar<int64_t>(1));
      model.Initializer("axis0", Tensor::FromVector<int64_t>({1}, {0}));
      model.Initializer("rest", Tensor::FromVector<int64_t>({3}, {3, kHeads, kHeadSize}));
      for (const char* i : {"zero", "one"}) {
        model.Node("Gather", {"x_shape", i}, {std::string("dim_") + i});
        model.Node("Unsqueeze", {std::string("dim_") + i, "axis0"}, {std::string("lead_") + i});
      }
      SetAttr(model.Node("Concat", {"lead_zero", "lead_one", "rest"}, {"shape5"}), "axis", int64_t{0});
    } else {
      model.Initializer("shape5", Tensor::FromVector<int64_t>({5}, {lead[0], lead[1], 3, kHeads, kHeadSize}));
    }
    model.Node("Reshape", {"qkv", target}, {"qkv5"});
    if (unbind == Unbind::kSplitFirst) {
      model.Initializer("ones", Tensor::FromVector<int64_t>({3}, {1, 1, 1}));
      model.Initializer("axis_0", Tensor::FromVector<int64_t>({1}, {0}));
      model.Initializer("axis_2", Tensor::FromVector<int64_t>({1}, {2}));
      SetAttr(model.Node("Split", {"qkv5", "ones"}, {"q5", "k5", "v5"}), "axis", int64_t{2});
      for (const char* p : {"q", "v"}) {
        SetAttr(model.Node("Transpose", {std::string(p) + "5"}, {std::string(p) + "t"}), "perm",
                std::vector<int64_t>{2, 0, 3, 1, 4});
        model.Node("Squeeze", {std::string(p) + "t", "axis_0"}, {std::string(p) + "h"});
      }
      model.Node("Squeeze", {"k5", "axis_2"}, {"k4"});
      SetAttr(model.Node("Transpose", {"k4"}, {"kt"}), "perm", std::vector<int64_t>{0, 2, 3, 1});
    } else {
      SetAttr(model.Node("Transpose", {"qkv5"}, {"parts"}), "perm", std::vector<int64_t>{2, 0, 3, 1, 4});
    }
    if (unbind == Unbind::kSplit) {
      model.Initializer("ones", Tensor::FromVector<int64_t>({3}, {1, 1, 1}));
      model.Initializer("squeeze_axes", Tensor::FromVector<int64_t>({1}, {0}));
      SetAttr(model.Node("Split", {"parts", "ones"}, {"q1", "k1", "v1"}), "axis", int64_t{0});
      for (const char* p : {"q", "k", "v"}) {
        model.Node("Squeeze", {std::string(p) + "1", "squeeze_axes"}, {std::string(p) + "h"});
      }
    } else if (unbind == Unbind::kGathers) {
      const char* names[] = {"q", "k", "v"};
      for (int64_t i = 0; i < 3; ++i) {
        const std::string index = std::string("index_") + names[i];
        model.Initializer(index, Tensor::Scalar<int64_t>(order_[i]));
        model.Node("Gather", {"parts", index}, {std::string(names[i]) + "h"});
      }
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadSize));
    if (unbind != Unbind::kSplitFirst) {
      SetAttr(model.Node("Transpose", {"kh"}, {"kt"}), "perm", std::vector<int64_t>{0, 1, 3, 2});
    }
    if (sdpa_scales) {  // torch's scaled_dot_product_attention export: sqrt(scale) on q and on k^T
      model.Initializer("root_scale", Tensor::Scalar<float>(std::sqrt(scale)));
      model.Node("Mul", {"qh", "root_scale"}, {"qs"});
      model.Node("Mul", {"kt", "root_scale"}, {"ks"});
      model.Node("MatMul", {"qs", "ks"}, {"scores"});
    } else {
      model.Initializer("scale", Tensor::Scalar<float>(scale));
      model.Node("Mul", {"qh", "scale"}, {"qs"});
      model.Node("MatMul", {"qs", "kt"}, {"scores"});
    }
    SetAttr(model.Node("Softmax", {"scores"}, {"probs"}), "axis", int64_t{-1});
    model.Node("MatMul", {"probs", "vh"}, {"ctx"});
    SetAttr(model.Node("Transpose", {"ctx"}, {"y"}), "perm", std::vector<int64_t>{0, 2, 1, 3});
    model.Output("y", DataType::kFloat, {1, kTokens, kHeads, kHeadSize});
  }

  std::vector<int64_t> order_ = {0, 1, 2};  // the part each Gather takes for q, k and v
};

TEST_P(UnboundQkvTest, FusesReadingTheProjectionPacked) {
  const auto& [unbind, lead, sdpa] = GetParam();
  Build(unbind, lead, sdpa);
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 1);
  const Node& attention = Only("FusedAttention");
  EXPECT_EQ(attention.proto->input(0), "qkv");
  EXPECT_EQ(attention.proto->input(1), "");
  for (const Node& n : graph().nodes) {
    for (const char* gone : {"Transpose", "Softmax", "Split", "Squeeze"}) EXPECT_NE(n.op_type(), gone);
  }
  ExpectSameOutputs({{"x", Floats({1, kTokens, kHidden}, 1)}}, 1e-4);
}

INSTANTIATE_TEST_SUITE_P(
    Forms, UnboundQkvTest,
    ::testing::Values(std::make_tuple(Unbind::kSplit, std::vector<int64_t>{1, kTokens}, false),
                      std::make_tuple(Unbind::kGathers, std::vector<int64_t>{0, -1}, false),
                      std::make_tuple(Unbind::kSplit, std::vector<int64_t>{}, true),
                      std::make_tuple(Unbind::kGathers, std::vector<int64_t>{}, false),
                      std::make_tuple(Unbind::kSplitFirst, std::vector<int64_t>{1, kTokens}, false),
                      std::make_tuple(Unbind::kSplitFirst, std::vector<int64_t>{}, true)));

// Parts taken in another order (k from part 0), or a part something else reads, stay unfused.
TEST_F(UnboundQkvTest, OtherOrdersAndSharedPartsStay) {
  order_ = {1, 0, 2};  // q from part 1, k from part 0
  Build(Unbind::kGathers, {1, kTokens}, false);
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 0);
  ExpectSameOutputs({{"x", Floats({1, kTokens, kHidden}, 1)}}, 1e-4);
}

TEST_F(UnboundQkvTest, APartReadElsewhereStays) {
  Build(Unbind::kSplit, {1, kTokens}, false);
  model.Output("vh", DataType::kFloat, {1, kHeads, kTokens, kHeadSize});
  EXPECT_EQ(Run("FuseAttention", FuseAttention), 0);
  ExpectSameOutputs({{"x", Floats({1, kTokens, kHidden}, 1)}}, 1e-4);
}

}  // namespace
}  // namespace onnxflow::graph
