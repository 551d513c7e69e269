// Float16 storage of a float16 model's blocked values and the plain values moved out of them
// (graph/blocked_half.h): which values go to float16 (those the model declares float16, written by
// a BlockedConv, BlockedDepthwiseConv or FromBlocked and read by kernels that take float16, with
// the values a Concat, Split, pool, Resize, BatchNormalization, Add, Reshape or Transpose ties to
// them; other readers read a float copy where that pays), which stay float, and that the results
// stay the float16 model's.
#include "graph/blocked_half.h"
#include "graph/blocked_half_test_util.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

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

// x (float) -> Cast to `type` -> stem Conv -> Relu -> 3x3 Conv + the stem's output -> Relu ->
// MaxPool -> 1x1 Conv -> Concat with the pool's output -> Resize x2 -> 3x3 Conv -> Cast to float:
// y. Beside it, a 1x1 Conv of the pool's output read by LeakyRelu (a blocked op that takes float
// only), the pool's output Cast to float as a second graph output, and a detector's head on
// conv2's output: Reshape -> Transpose -> Softmax, Cast to float.
ModelBuilder Cnn(DataType type) {
  const auto t = static_cast<int64_t>(type);
  ModelBuilder m(type == DataType::kBFloat16 ? 22 : 17);  // Conv takes bfloat16 from opset 22
  m.Input("x", DataType::kFloat, {1, 3, 16, 16});
  m.Initializer("w0", PatternValues(type, {32, 3, 3, 3}, 0));
  m.Initializer("w1", PatternValues(type, {32, 32, 3, 3}, 1));
  m.Initializer("w2", PatternValues(type, {32, 32, 1, 1}, 2));
  m.Initializer("w3", PatternValues(type, {32, 64, 3, 3}, 3));
  m.Initializer("w4", PatternValues(type, {16, 32, 1, 1}, 4));
  m.Initializer("scales", Tensor::FromVector<float>({4}, {1, 1, 2, 2}));
  SetAttr(m.Node("Cast", {"x"}, {"xh"}, "to_half"), "to", t);
  auto& c0 = m.Node("Conv", {"xh", "w0"}, {"c0"}, "stem");
  SetAttr(c0, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.Node("Relu", {"c0"}, {"r0"}, "relu0");
  auto& c1 = m.Node("Conv", {"r0", "w1"}, {"c1"}, "conv1");
  SetAttr(c1, "pads", std::vector<int64_t>{1, 1, 1, 1});
  m.Node("Add", {"c1", "r0"}, {"s1"}, "residual");
  m.Node("Relu", {"s1"}, {"r1"}, "relu1");
  auto& pool = m.Node("MaxPool", {"r1"}, {"p"}, "pool");
  SetAttr(pool, "kernel_shape", std::vector<int64_t>{2, 2});
  SetAttr(pool, "strides", std::vector<int64_t>{2, 2});
  m.Node("Conv", {"p", "w2"}, {"c2"}, "conv2");
  SetAttr(m.Node("Concat", {"c2", "p"}, {"cat"}, "cat"), "axis", int64_t{1});
  SetAttr(m.Node("Resize", {"cat", "", "scales"}, {"up"}, "up"), "mode", std::string("nearest"));
  auto& c3 = m.Node("Conv", {"up", "w3"}, {"c3"}, "conv3");
  SetAttr(c3, "pads", std::vector<int64_t>{1, 1, 1, 1});
  SetAttr(m.Node("Cast", {"c3"}, {"y"}, "to_float"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.Node("Conv", {"p", "w4"}, {"c4"}, "conv4");
  m.Node("LeakyRelu", {"c4"}, {"leaky"}, "leaky");
  SetAttr(m.Node("Cast", {"leaky"}, {"z"}, "leaky_to_float"), "to", int64_t{onnx::TensorProto::FLOAT});
  SetAttr(m.Node("Cast", {"p"}, {"pooled"}, "pool_to_float"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.Initializer("head_shape", Tensor::FromVector<int64_t>({3}, {1, 32, 64}));
  m.Node("Reshape", {"c2", "head_shape"}, {"flat"}, "flat");
  SetAttr(m.Node("Transpose", {"flat"}, {"rows"}, "rows"), "perm", std::vector<int64_t>{0, 2, 1});
  SetAttr(m.Node("Softmax", {"rows"}, {"prob"}, "prob"), "axis", int64_t{2});
  SetAttr(m.Node("Cast", {"prob"}, {"head"}, "head_to_float"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.Output("y", DataType::kFloat, {1, 32, 16, 16});
  m.Output("head", DataType::kFloat, {1, 64, 32});
  m.Output("z", DataType::kFloat, {1, 16, 8, 8});
  m.Output("pooled", DataType::kFloat, {1, 32, 8, 8});
  return m;
}

// x (float) -> Cast to `type` -> stem Conv -> Relu -> depthwise 3x3 -> Relu -> 1x1 Conv + the
// stem's output -> BatchNormalization -> Relu -> depthwise 3x3 of stride 2 -> 1x1 Conv -> Cast to
// float: y. MobileNet's depthwise and pointwise pairs, and a pre-activation normalization (ResNet
// v2's) that cannot fold into the convolution before it, which adds a residual.
ModelBuilder DepthwiseChain(DataType type) {
  const auto t = static_cast<int64_t>(type);
  const std::vector<int64_t> pad1 = {1, 1, 1, 1};
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 3, 16, 16});
  m.Initializer("w0", PatternValues(type, {32, 3, 3, 3}, 0));
  m.Initializer("dw1", PatternValues(type, {32, 1, 3, 3}, 1));
  m.Initializer("pw1", PatternValues(type, {32, 32, 1, 1}, 2));
  m.Initializer("dw2", PatternValues(type, {32, 1, 3, 3}, 3));
  m.Initializer("pw2", PatternValues(type, {16, 32, 1, 1}, 4));
  m.Initializer("scale", PatternValues(type, {32}, 5));
  m.Initializer("shift", PatternValues(type, {32}, 6));
  m.Initializer("mean", PatternValues(type, {32}, 7));
  std::vector<float> var;
  for (int i = 0; i < 32; ++i) var.push_back(0.5f + static_cast<float>(i % 7) / 8);
  m.Initializer("var", Typed(type, {32}, var));
  SetAttr(m.Node("Cast", {"x"}, {"xh"}, "to_half"), "to", t);
  SetAttr(m.Node("Conv", {"xh", "w0"}, {"c0"}, "stem"), "pads", pad1);
  m.Node("Relu", {"c0"}, {"r0"}, "relu0");
  auto& d1 = m.Node("Conv", {"r0", "dw1"}, {"d1"}, "depthwise1");
  SetAttr(d1, "pads", pad1);
  SetAttr(d1, "group", int64_t{32});
  m.Node("Relu", {"d1"}, {"r1"}, "relu1");
  m.Node("Conv", {"r1", "pw1"}, {"p1"}, "pointwise1");
  m.Node("Add", {"p1", "r0"}, {"s1"}, "residual");
  m.Node("BatchNormalization", {"s1", "scale", "shift", "mean", "var"}, {"n1"}, "norm");
  m.Node("Relu", {"n1"}, {"r2"}, "relu2");
  auto& d2 = m.Node("Conv", {"r2", "dw2"}, {"d2"}, "depthwise2");
  SetAttr(d2, "pads", pad1);
  SetAttr(d2, "group", int64_t{32});
  SetAttr(d2, "strides", std::vector<int64_t>{2, 2});
  m.Node("Conv", {"d2", "pw2"}, {"p2"}, "pointwise2");
  SetAttr(m.Node("Cast", {"p2"}, {"y"}, "to_float"), "to", int64_t{onnx::TensorProto::FLOAT});
  m.Output("y", DataType::kFloat, {1, 16, 8, 8});
  return m;
}

std::unique_ptr<Model> Load(const ModelBuilder& m) {
  auto model = LoadModelBytes(m.Serialize(), "", SessionOptions(), GlobalKernelRegistry());
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  return model.ok() ? std::move(model).value() : nullptr;
}
std::unique_ptr<Model> Load(DataType type) { return Load(Cnn(type)); }

// The largest difference between `m` run op by op in its types (each node widens, computes in
// float and rounds) and optimized, over every output, relative to the value plus 0.25.
double WorstDifference(const ModelBuilder& m) {
  std::vector<float> x;
  for (int i = 0; i < 3 * 16 * 16; ++i) x.push_back(static_cast<float>((i * 13) % 17 - 8) / 8.0f);
  auto run = [&](bool optimize) {
    SessionOptions options;
    options.optimize = optimize;
    auto session = Session::LoadFromBytes(m.Serialize(), options);
    EXPECT_TRUE(session.ok()) << session.status().ToString();
    auto out = session->Run({{"x", Value(Tensor::FromVector<float>({1, 3, 16, 16}, x))}});
    EXPECT_TRUE(out.ok()) << out.status().ToString();
    return std::move(out).value();
  };
  const auto op_by_op = run(false), optimized = run(true);
  EXPECT_EQ(op_by_op.size(), optimized.size());
  double worst = 0;
  for (size_t k = 0; k < op_by_op.size() && k < optimized.size(); ++k) {
    const Tensor& want = op_by_op[k].value.tensor();
    const Tensor& got = optimized[k].value.tensor();
    EXPECT_EQ(got.dtype(), DataType::kFloat);
    EXPECT_EQ(got.shape(), want.shape());
    if (got.shape() != want.shape()) return 1e9;
    for (int64_t i = 0; i < want.size(); ++i) {
      const float a = want.data<float>()[i], b = got.data<float>()[i];
      worst = std::max<double>(worst, std::fabs(a - b) / (std::fabs(a) + 0.25));
    }
  }
  return worst;
}

// The BlockedConvs by the ONNX node they came from, with the type each writes.
std::map<std::string, DataType> ConvOutputTypes(const Graph& g) {
  std::map<std::string, DataType> types;
  for (const Node& n : g.nodes) {
    if (!IsInternal(n, internal_ops::kBlockedConv)) continue;
    const auto* attr = Attr(*n.proto, "output_type");
    types[n.proto->name()] = attr != nullptr ? static_cast<DataType>(attr->i()) : DataType::kFloat;
    EXPECT_EQ(KnownType(g, n.proto->output(0)), types[n.proto->name()]) << n.proto->name();
  }
  return types;
}

TEST(BlockedHalfTest, BlockedValuesOfAHalfModelAreStoredInHalf) {
  auto model = Load(DataType::kFloat16);
  ASSERT_NE(model, nullptr);
  const Graph& g = *model->graph;
  // The stem (which reads the plain image), conv1 (which adds the stem's output as its residual
  // Z) and conv2 write float16, and with them the pool, the Concat and the Resize between them.
  // conv3 writes y, which the model declares float (its Cast to float is gone: conv3 writes y
  // itself); conv4's output goes to LeakyRelu, which takes float only.
  const std::map<std::string, DataType> types = ConvOutputTypes(g);
  ASSERT_EQ(types.size(), 5u);
  for (const char* conv : {"stem", "conv1", "conv2"}) EXPECT_EQ(types.at(conv), DataType::kFloat16) << conv;
  for (const char* conv : {"conv3", "conv4"}) EXPECT_EQ(types.at(conv), DataType::kFloat) << conv;
  int half_values = 0;
  for (const Node& n : g.nodes) {
    for (const auto& out : n.proto->output()) half_values += KnownType(g, out) == DataType::kFloat16;
    if (IsInternal(n, internal_ops::kBlockedMaxPool) || IsInternal(n, internal_ops::kBlockedResize) ||
        IsOp(n, "Concat")) {
      EXPECT_EQ(KnownType(g, n.proto->output(0)), DataType::kFloat16) << n.op_type();
    }
  }
  // And the head: FromBlocked writes conv2's output in float16, the Reshape and Transpose move it
  // in float16, and the Softmax reads a float copy, Cast after the Transpose.
  int from_blocked_half = 0, casts_to_softmax = 0;
  for (const Node& n : g.nodes) {
    if (IsInternal(n, internal_ops::kFromBlocked) && KnownType(g, n.proto->output(0)) == DataType::kFloat16) {
      ++from_blocked_half;
    }
    if (IsOp(n, "Softmax")) {
      const NodeGraph::Id cast = g.nodes.Producer(n.proto->input(0));
      ASSERT_NE(cast, NodeGraph::None());
      casts_to_softmax +=
          IsOp(g.nodes[cast], "Cast") && KnownType(g, g.nodes[cast].proto->input(0)) == DataType::kFloat16;
    }
  }
  EXPECT_EQ(from_blocked_half, 1);
  EXPECT_EQ(casts_to_softmax, 1);
  EXPECT_EQ(half_values, 9);  // 3 convolutions, pool, Concat, Resize; FromBlocked, Reshape, Transpose
  // The graph's outputs keep their float.
  for (const char* out : {"y", "z", "pooled", "head"}) EXPECT_EQ(KnownType(g, out), DataType::kFloat) << out;
}

TEST(BlockedHalfTest, ResultsStayTheHalfModels) {
  // The optimized run rounds the stored values as the op-by-op run does but sums convolutions in
  // another order: a few units in the last place of half (2^-11 relative) through four of them.
  EXPECT_LT(WorstDifference(Cnn(DataType::kFloat16)), 8 * 0x1p-11);
}

// A float16 MobileNet-like chain: both depthwise convolutions write float16 (the second reads the
// normalization's float16 output), and so do the pointwise ones, but for the last, which writes y,
// declared float. The stored values are rounded as the model rounds them.
TEST(BlockedHalfTest, DepthwiseChainIsStoredInHalf) {
  auto model = Load(DepthwiseChain(DataType::kFloat16));
  ASSERT_NE(model, nullptr);
  const Graph& g = *model->graph;
  int depthwise = 0, norms = 0, half_values = 0;
  for (const Node& n : g.nodes) {
    for (const auto& out : n.proto->output()) half_values += KnownType(g, out) == DataType::kFloat16;
    if (IsInternal(n, internal_ops::kBlockedDepthwiseConv)) {
      ++depthwise;
      const auto* attr = Attr(*n.proto, "output_type");
      ASSERT_NE(attr, nullptr) << n.proto->name();
      EXPECT_EQ(attr->i(), static_cast<int64_t>(DataType::kFloat16)) << n.proto->name();
      EXPECT_EQ(KnownType(g, n.proto->input(0)), DataType::kFloat16) << n.proto->name();
      EXPECT_EQ(KnownType(g, n.proto->output(0)), DataType::kFloat16) << n.proto->name();
    }
    if (IsInternal(n, internal_ops::kBlockedBatchNormalization)) {
      ++norms;
      EXPECT_EQ(KnownType(g, n.proto->input(0)), DataType::kFloat16);
      EXPECT_EQ(KnownType(g, n.proto->output(0)), DataType::kFloat16);
    }
  }
  EXPECT_EQ(depthwise, 2);
  EXPECT_EQ(norms, 1);
  const std::map<std::string, DataType> convs = ConvOutputTypes(g);
  ASSERT_EQ(convs.size(), 3u);
  for (const char* conv : {"stem", "pointwise1"}) EXPECT_EQ(convs.at(conv), DataType::kFloat16) << conv;
  EXPECT_EQ(convs.at("pointwise2"), DataType::kFloat);
  EXPECT_EQ(half_values, 5);  // stem, depthwise1, pointwise1, the normalization, depthwise2
  EXPECT_LT(WorstDifference(DepthwiseChain(DataType::kFloat16)), 8 * 0x1p-11);
  // A float model's chain stays float.
  auto float_model = Load(DepthwiseChain(DataType::kFloat));
  ASSERT_NE(float_model, nullptr);
  for (const Node& n : float_model->graph->nodes) {
    for (const auto& out : n.proto->output()) EXPECT_NE(KnownType(*float_model->graph, out), DataType::kFloat16) << out;
  }
}

TEST(BlockedHalfTest, OtherModelsKeepFloatValues) {
  for (DataType type : {DataType::kFloat, DataType::kBFloat16}) {
    auto model = Load(type);
    ASSERT_NE(model, nullptr);
    for (const auto& [conv, written] : ConvOutputTypes(*model->graph)) {
      EXPECT_EQ(written, DataType::kFloat) << conv << " of a " << DataTypeName(type) << " model";
    }
  }
}

}  // namespace
}  // namespace onnxflow::graph
