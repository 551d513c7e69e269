// Float16 storage of a float16 transformer's activations (graph/blocked_half.h): in a ViT-shaped
// encoder block, the fused projections (FusedMatMul), the attention (FusedAttention) and the
// normalizations (AddLayerNormalization) write float16 where the model declares it, the residual
// stream (AddLayerNormalization's sum) stays float, the graph's outputs keep their float, and the
// results stay the float16 model's.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "graph/blocked_half.h"
#include "graph/blocked_half_test_util.h"
#include "graph/fusion_util.h"
#include "graph/model.h"
#include "include/onnxflow/session.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/numeric.h"
#include "ops/register_all.h"
#include "tools/model_builder.h"

namespace onnxflow::graph {
namespace {

using tools::ModelBuilder;
using tools::SetAttr;

constexpr int64_t kTokens = 9, kHidden = 32, kHeads = 2, kHeadSize = kHidden / kHeads;

Tensor Scalar(DataType type, float value) { return Typed(type, {}, {value}); }

// x (float) -> Cast to `type` -> + position -> a pre-norm encoder block as a ViT exports it (the
// attention written out: Reshape, Transpose, Split, Squeeze, Mul by the scale, MatMul, Softmax,
// MatMul, Transpose, Reshape; an erf GELU) -> LayerNormalization -> Cast to float: y.
ModelBuilder Encoder(DataType type) {
  const auto t = static_cast<int64_t>(type);
  ModelBuilder m(type == DataType::kBFloat16 ? 22 : 17);
  m.Input("x", DataType::kFloat, {1, kTokens, kHidden});
  int seed = 0;
  auto linear = [&](const std::string& in, const std::string& name, int64_t k, int64_t n) {
    m.Initializer(name + ".w", PatternValues(type, {k, n}, ++seed));
    m.Initializer(name + ".b", PatternValues(type, {n}, ++seed));
    m.Node("MatMul", {in, name + ".w"}, {name + ".mm"}, name + ".mm_node");
    m.Node("Add", {name + ".mm", name + ".b"}, {name}, name + ".add_node");
    return name;
  };
  auto layer_norm = [&](const std::string& in, const std::string& name) {
    m.Initializer(name + ".g", PatternValues(type, {kHidden}, ++seed));
    m.Initializer(name + ".beta", PatternValues(type, {kHidden}, ++seed));
    SetAttr(m.Node("LayerNormalization", {in, name + ".g", name + ".beta"}, {name}, name + "_node"), "epsilon", 1e-6f);
    return name;
  };
  m.Initializer("pos", PatternValues(type, {1, kTokens, kHidden}, ++seed));
  m.Initializer("parts_shape", Tensor::FromVector<int64_t>({5}, {1, kTokens, 3, kHeads, kHeadSize}));
  m.Initializer("hidden_shape", Tensor::FromVector<int64_t>({3}, {1, kTokens, kHidden}));
  m.Initializer("ones3", Tensor::FromVector<int64_t>({3}, {1, 1, 1}));
  m.Initializer("axis0", Tensor::FromVector<int64_t>({1}, {0}));
  m.Initializer("scale", Scalar(type, 0.25f));
  m.Initializer("sqrt2", Scalar(type, std::sqrt(2.0f)));
  m.Initializer("one", Scalar(type, 1.0f));
  m.Initializer("half", Scalar(type, 0.5f));
  SetAttr(m.Node("Cast", {"x"}, {"xh"}, "to_half"), "to", t);
  m.Node("Add", {"xh", "pos"}, {"embed"}, "embed_node");
  const std::string h1 = layer_norm("embed", "norm1");
  const std::string qkv = linear(h1, "qkv", kHidden, 3 * kHidden);
  m.Node("Reshape", {qkv, "parts_shape"}, {"qkv5"}, "qkv5_node");
  SetAttr(m.Node("Transpose", {"qkv5"}, {"parts"}, "parts_node"), "perm", std::vector<int64_t>{2, 0, 3, 1, 4});
  SetAttr(m.Node("Split", {"parts", "ones3"}, {"q1", "k1", "v1"}, "split_node"), "axis", int64_t{0});
  for (const char* p : {"q", "k", "v"}) m.Node("Squeeze", {std::string(p) + "1", "axis0"}, {p}, std::string(p) + "_node");
  m.Node("Mul", {"q", "scale"}, {"q_scaled"}, "q_scaled_node");
  SetAttr(m.Node("Transpose", {"k"}, {"kt"}, "kt_node"), "perm", std::vector<int64_t>{0, 1, 3, 2});
  m.Node("MatMul", {"q_scaled", "kt"}, {"scores"}, "scores_node");
  SetAttr(m.Node("Softmax", {"scores"}, {"probs"}, "probs_node"), "axis", int64_t{-1});
  m.Node("MatMul", {"probs", "v"}, {"ctx"}, "ctx_node");
  SetAttr(m.Node("Transpose", {"ctx"}, {"ctx_t"}, "ctx_t_node"), "perm", std::vector<int64_t>{0, 2, 1, 3});
  m.Node("Reshape", {"ctx_t", "hidden_shape"}, {"ctx_r"}, "ctx_r_node");
  m.Node("Add", {"embed", linear("ctx_r", "proj", kHidden, kHidden)}, {"res1"}, "res1_node");
  const std::string h2 = layer_norm("res1", "norm2");
  const std::string f = linear(h2, "fc1", kHidden, 4 * kHidden);
  m.Node("Div", {f, "sqrt2"}, {"g_div"}, "g_div_node");
  m.Node("Erf", {"g_div"}, {"g_erf"}, "g_erf_node");
  m.Node("Add", {"g_erf", "one"}, {"g_add"}, "g_add_node");
  m.Node("Mul", {f, "g_add"}, {"g_mul"}, "g_mul_node");
  m.Node("Mul", {"g_mul", "half"}, {"gelu"}, "gelu_node");
  m.Node("Add", {"res1", linear("gelu", "fc2", 4 * kHidden, kHidden)}, {"res2"}, "res2_node");
  const std::string out = layer_norm("res2", "norm");
  SetAttr(m.Node("Cast", {out}, {"y"}, "to_float"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.Output("y", DataType::kFloat, {1, kTokens, kHidden});
  return m;
}

std::vector<float> Input() {
  std::vector<float> x;
  for (int i = 0; i < kTokens * kHidden; ++i) x.push_back(std::sin(0.7f * i));
  return x;
}

// The type each fused transformer node writes to each of its outputs, by op; not the node that
// writes the graph's output y (the last normalization, whose Cast to float went: it writes y, in
// float, itself).
std::multimap<std::string, std::vector<DataType>> OutputTypes(const Graph& g) {
  std::multimap<std::string, std::vector<DataType>> types;
  for (const Node& n : g.nodes) {
    for (const char* op : {internal_ops::kFusedMatMul, internal_ops::kFusedAttention,
                           internal_ops::kAddLayerNormalization}) {
      if (!IsInternal(n, op)) continue;
      if (n.proto->output(0) == "y") {
        EXPECT_EQ(KnownType(g, "y"), DataType::kFloat);
        continue;
      }
      std::vector<DataType> written;
      for (const auto& out : n.proto->output()) written.push_back(out.empty() ? DataType::kUndefined : KnownType(g, out));
      types.emplace(op, written);
    }
  }
  return types;
}

TEST(BlockedHalfTransformerTest, FusedNodesOfAHalfModelWriteHalf) {
  auto model = LoadModelBytes(Encoder(DataType::kFloat16).Serialize(), "", SessionOptions(), GlobalKernelRegistry());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  const Graph& g = *(*model)->graph;
  const auto types = OutputTypes(g);
  // Four projections, the attention and two normalizations with their residual Adds (the third
  // writes y), all fused as the float model's are.
  ASSERT_EQ(types.count(internal_ops::kFusedMatMul), 4u);
  ASSERT_EQ(types.count(internal_ops::kFusedAttention), 1u);
  ASSERT_EQ(types.count(internal_ops::kAddLayerNormalization), 2u);
  for (const auto& [op, written] : types) {
    ASSERT_FALSE(written.empty()) << op;
    if (op != internal_ops::kAddLayerNormalization) {
      EXPECT_EQ(written[0], DataType::kFloat16) << op;
      continue;
    }
    // The normalized output in half, the residual stream (the sum, output 3) in float.
    EXPECT_EQ(written[0], DataType::kFloat16) << op;
    if (written.size() > 3 && written[3] != DataType::kUndefined) EXPECT_EQ(written[3], DataType::kFloat) << op;
  }
  EXPECT_EQ(KnownType(g, "y"), DataType::kFloat);
}

TEST(BlockedHalfTransformerTest, ResultsStayTheHalfModels) {
  auto run = [&](DataType type, bool optimize) {
    SessionOptions options;
    options.optimize = optimize;
    auto session = Session::LoadFromBytes(Encoder(type).Serialize(), options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    auto out = session->Run({{"x", Value(Tensor::FromVector<float>({1, kTokens, kHidden}, Input()))}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return std::move(out).value();
  };
  // Op by op in half (every value rounded, the residual stream too) and the float model against
  // the optimized float16 run, which rounds the values it stores in half once each.
  const auto op_by_op = run(DataType::kFloat16, false), optimized = run(DataType::kFloat16, true);
  const auto in_float = run(DataType::kFloat, true);
  const Tensor& got = optimized[0].value.tensor();
  ASSERT_EQ(got.dtype(), DataType::kFloat);
  for (const auto* want : {&op_by_op[0].value.tensor(), &in_float[0].value.tensor()}) {
    ASSERT_EQ(got.shape(), want->shape());
    double worst = 0;
    for (int64_t i = 0; i < want->size(); ++i) {
      const float a = want->data<float>()[i], b = got.data<float>()[i];
      worst = std::max<double>(worst, std::fabs(a - b) / (std::fabs(a) + 0.25));
    }
    // A few units in the last place of half (2^-11 relative) through one block.
    EXPECT_LT(worst, 8 * 0x1p-11);
  }
}

TEST(BlockedHalfTransformerTest, OtherModelsKeepFloatValues) {
  for (DataType type : {DataType::kFloat, DataType::kBFloat16}) {
    auto model = LoadModelBytes(Encoder(type).Serialize(), "", SessionOptions(), GlobalKernelRegistry());
    ASSERT_TRUE(model.ok()) << model.status().ToString();
    const auto types = OutputTypes(*(*model)->graph);
    EXPECT_FALSE(types.empty());
    for (const auto& [op, written] : types) {
      for (DataType w : written) EXPECT_NE(w, DataType::kFloat16) << op << " of a " << DataTypeName(type) << " model";
    }
  }
}

}  // namespace
}  // namespace onnxflow::graph
