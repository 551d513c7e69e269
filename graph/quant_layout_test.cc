// UseChannelsLastQuant (graph/quant_layout.h) where a residual's operand comes from outside the
// region: it enters through one Transpose of its own when it is proven 4-D, shared by all its
// region readers; a Pad by constant pads stays in the region; the near misses (an operand of unknown rank, a rank-3 one that broadcasts, a
// per-channel [C, 1, 1] constant, a sum only a plain reader reads) stay as they were. Every case
// gives the bytes of the unoptimized run.
#include "graph/quant_layout.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/graph_test.h"
#include "graph/passes.h"
#include "graph/qdq_fusion.h"
#include "ops/framework/domains.h"
#include "ops/register_all.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;
using Names = std::vector<std::string>;

const std::string kNhwc = std::string(kOnnxflowDomain) + ".QLinearConvNhwc";
const std::string kAdd = std::string(kMsDomain) + ".QLinearAdd";
const std::string kLeaky = std::string(kMsDomain) + ".QLinearLeakyRelu";

Tensor Bytes(const std::vector<int64_t>& shape, int seed) {
  Tensor t(DataType::kUint8, shape);
  for (int64_t i = 0; i < t.size(); ++i) t.mutable_data<uint8_t>()[i] = static_cast<uint8_t>(i * 29 + seed * 7 + 3);
  return t;
}

class QuantLayoutTest : public GraphTest {
 protected:
  QuantLayoutTest() {
    auto* ms = model.proto().add_opset_import();
    ms->set_domain(kMsDomain);
    ms->set_version(1);
    model.Initializer("s", Tensor::Scalar<float>(0.05f));
    model.Initializer("z", Tensor::Scalar<uint8_t>(100));
    model.Initializer("ws", Tensor::Scalar<float>(0.01f));
    model.Initializer("wz", Tensor::Scalar<int8_t>(0));
  }

  // QLinearConv `in` -> `out`, 8 channels to 8, 3x3 padded (`seed` picks the weights).
  void Conv(const std::string& in, const std::string& out, int seed) {
    const std::string w = "w_" + out;
    Tensor t(DataType::kInt8, {8, 8, 3, 3});
    for (int64_t i = 0; i < t.size(); ++i) t.mutable_data<int8_t>()[i] = static_cast<int8_t>((i * 13 + seed) % 61 - 30);
    model.Initializer(w, t);
    SetAttr(model.Node("QLinearConv", {in, "s", "z", w, "ws", "wz", "s", "z"}, {out}), "pads",
            std::vector<int64_t>{1, 1, 1, 1});
  }
  void Add(const std::string& a, const std::string& b, const std::string& out) {
    model.Node("QLinearAdd", {a, "s", "z", b, "s", "z", "s", "z"}, {out}).set_domain(kMsDomain);
  }
  void Leaky(const std::string& in, const std::string& out) {
    auto& n = model.Node("QLinearLeakyRelu", {in, "s", "z", "s", "z"}, {out});
    n.set_domain(kMsDomain);
    SetAttr(n, "alpha", 0.1f);
  }
  int Transposes() {
    const Names ops = Ops();
    return static_cast<int>(std::count(ops.begin(), ops.end(), "Transpose"));
  }
  // The input of the Transpose that reads a plain value into the region (none: "").
  std::vector<std::string> Entered() {
    std::vector<std::string> from;
    for (const Node& n : graph().nodes) {
      const auto* perm = n.op_type() == "Transpose" ? &n.proto->attribute(0) : nullptr;
      if (perm != nullptr && perm->ints_size() == 4 && perm->ints(1) == 2) from.push_back(n.proto->input(0));
    }
    std::sort(from.begin(), from.end());
    return from;
  }
};

// x -> conv -> QLinearAdd(., y) -> conv: y, a graph input declared 4-D, enters through a
// Transpose of its own and the sum stays channels-last (it had left the region before the Add and
// come back after it: two Transposes more).
TEST_F(QuantLayoutTest, AResidualFromOutsideEnters) {
  model.Input("x", DataType::kUint8, {1, 8, 6, 6});
  model.Input("y", DataType::kUint8, {1, 8, 6, 6});
  Conv("x", "c1", 1);
  Add("c1", "y", "a");
  Conv("a", "out", 2);
  model.Output("out", DataType::kUint8, {1, 8, 6, 6});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Transpose", kNhwc, "Transpose", kAdd, kNhwc, "Transpose"}));
  EXPECT_EQ(Entered(), (std::vector<std::string>{"x", "y"}));
  ExpectSameOutputs({{"x", Bytes({1, 8, 6, 6}, 1)}, {"y", Bytes({1, 8, 6, 6}, 2)}}, 0.0);
}

// A vocoder's residual stream as the QDQ fusion leaves it: the stream s (here a graph input)
// feeds QLinearLeakyRelu -> conv and the QLinearAdd that closes the block. One Transpose takes s
// into the region for both: the LeakyRelu runs on it channels-last. Then the next block, all in
// the region, and one Transpose out. (Before: a Transpose into the conv and one out of it for
// each block, four.)
TEST_F(QuantLayoutTest, AResidualStreamEntersOnceForAllItsReaders) {
  model.Input("stream", DataType::kUint8, {1, 8, 6, 6});
  Leaky("stream", "l1");
  Conv("l1", "c1", 1);
  Add("c1", "stream", "a1");
  Leaky("a1", "l2");
  Conv("l2", "c2", 2);
  Add("c2", "a1", "a2");
  model.Output("a2", DataType::kUint8, {1, 8, 6, 6});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Transposes(), 2);
  EXPECT_EQ(Entered(), (std::vector<std::string>{"stream"}));
  const Names ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), kNhwc), 2);
  ExpectSameOutputs({{"stream", Bytes({1, 8, 6, 6}, 1)}}, 0.0);
}

// The operand's rank proven by its producers, not declared: Reshape of an input of unknown rank
// to a constant 4-entry shape.
TEST_F(QuantLayoutTest, AnOperandProvenFourDByItsProducer) {
  model.Input("x", DataType::kUint8, {1, 8, 6, 6});
  model.Input("flat", DataType::kUint8, {}, /*rank_known=*/false);
  model.Initializer("shape", Tensor::FromVector<int64_t>({4}, {1, 8, 6, 6}));
  model.Node("Reshape", {"flat", "shape"}, {"y"});
  Conv("x", "c1", 1);
  Add("c1", "y", "a");
  Conv("a", "out", 2);
  model.Output("out", DataType::kUint8, {1, 8, 6, 6});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Reshape", "Transpose", kNhwc, "Transpose", kAdd, kNhwc, "Transpose"}));
  EXPECT_EQ(Entered(), (std::vector<std::string>{"x", "y"}));
  ExpectSameOutputs({{"x", Bytes({1, 8, 6, 6}, 1)}, {"flat", Bytes({288}, 2)}}, 0.0);
}

// Near misses: an operand of unknown rank (a [C, H, W] one would broadcast along other axes
// channels-last), a rank-3 operand that broadcasts (the 1-D lift did not make it 4-D), and a
// sum read only by the graph's output (entering costs a Transpose in and one out where staying
// plain costs one): the QLinearAdd stays plain, the region leaves before it.
TEST_F(QuantLayoutTest, OperandsOfUnknownOrLowerRankStayOutside) {
  model.Input("x", DataType::kUint8, {1, 8, 6, 6});
  model.Input("unknown", DataType::kUint8, {}, /*rank_known=*/false);
  model.Input("chw", DataType::kUint8, {8, 6, 6});
  model.Input("y", DataType::kUint8, {1, 8, 6, 6});
  Conv("x", "c1", 1);
  Add("c1", "unknown", "a_unknown");
  Add("c1", "chw", "a_chw");
  Conv("a_unknown", "o1", 2);
  Conv("a_chw", "o2", 3);
  Add("c1", "y", "a_out");
  for (const char* out : {"o1", "o2"}) model.Output(out, DataType::kUint8, {1, 8, 6, 6});
  model.Output("a_out", DataType::kUint8, {1, 8, 6, 6});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  const Names ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), kAdd), 3);
  for (const Node& n : graph().nodes) {
    if (n.op_type() == "QLinearAdd") {
      EXPECT_EQ(n.proto->input(0), "c1") << n.proto->output(0);  // plain c1
    }
  }
  // x, then a_unknown and a_chw into their convolutions; c1 out once for all three sums, o1, o2 out.
  EXPECT_EQ(Entered(), (std::vector<std::string>{"a_chw", "a_unknown", "x"}));
  EXPECT_EQ(Transposes(), 6);
  ExpectSameOutputs({{"x", Bytes({1, 8, 6, 6}, 1)},
                     {"unknown", Bytes({1, 8, 6, 6}, 2)},
                     {"chw", Bytes({8, 6, 6}, 3)},
                     {"y", Bytes({1, 8, 6, 6}, 4)}},
                    0.0);
}

// The float form a quantizer leaves: DQ(conv) + DQ(shortcut) -> Q -> conv. The shortcut's
// DequantizeLinear joins the region with the Add, so the shortcut enters as bytes, not floats.
// A per-channel [C, 1, 1] float constant multiplied in keeps its Mul plain (channels-last it would
// scale along W); the same constant as [1, C, 1, 1] enters, transposed to [1, 1, 1, C].
TEST_F(QuantLayoutTest, FloatResidualsAndPerChannelConstants) {
  model.Input("x", DataType::kUint8, {1, 8, 6, 6});
  model.Input("short", DataType::kUint8, {1, 8, 6, 6});
  Tensor chw(DataType::kFloat, {8, 1, 1});
  for (int64_t c = 0; c < 8; ++c) chw.mutable_data<float>()[c] = 0.5f + 0.125f * static_cast<float>(c);
  model.Initializer("per_channel3", chw);
  model.Initializer("per_channel4", chw.Reshaped({1, 8, 1, 1}));
  Conv("x", "c1", 1);
  model.Node("DequantizeLinear", {"c1", "s", "z"}, {"f1"});
  model.Node("DequantizeLinear", {"short", "s", "z"}, {"f2"});
  model.Node("Add", {"f1", "f2"}, {"sum"});
  model.Node("QuantizeLinear", {"sum", "s", "z"}, {"q"});
  Conv("q", "c2", 2);
  model.Node("DequantizeLinear", {"c2", "s", "z"}, {"f3"});
  model.Node("Mul", {"f3", "per_channel3"}, {"m3"});
  model.Node("QuantizeLinear", {"m3", "s", "z"}, {"q3"});
  Conv("q3", "o3", 3);
  model.Node("Mul", {"f3", "per_channel4"}, {"m4"});
  model.Node("QuantizeLinear", {"m4", "s", "z"}, {"q4"});
  Conv("q4", "o4", 4);
  for (const char* out : {"o3", "o4"}) model.Output(out, DataType::kUint8, {1, 8, 6, 6});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  // x, the shortcut's bytes, the [1, C, 1, 1] constant, and q3 (after the plain Mul) enter.
  EXPECT_EQ(Entered(), (std::vector<std::string>{"per_channel4", "q3", "short", "x"}));
  for (const Node& n : graph().nodes) {
    if (n.op_type() == "Mul") {
      const bool plain = n.proto->input(1) == "per_channel3";
      EXPECT_EQ(n.proto->input(0) == "f3", plain) << n.proto->input(0);
    }
  }
  ExpectSameOutputs({{"x", Bytes({1, 8, 6, 6}, 1)}, {"short", Bytes({1, 8, 6, 6}, 2)}}, 0.0);
}

// MelGAN's residual block as a quantizer leaves it: conv -> DQ -> LeakyRelu -> Pad (reflect)
// -> Q -> conv. The Pad runs channels-last with its pads reordered, so nothing leaves the region;
// a Pad whose pads are computed at run time stays plain (the region leaves before it).
TEST_F(QuantLayoutTest, APadByConstantPadsStaysInTheRegion) {
  model.Input("x", DataType::kUint8, {1, 8, 6, 6});
  model.Input("run_pads", DataType::kInt64, {8});
  model.Initializer("pads", Tensor::FromVector<int64_t>({8}, {0, 0, 1, 2, 0, 0, 2, 1}));
  Conv("x", "c1", 1);
  model.Node("DequantizeLinear", {"c1", "s", "z"}, {"f"});
  SetAttr(model.Node("LeakyRelu", {"f"}, {"l"}), "alpha", 0.2f);
  SetAttr(model.Node("Pad", {"l", "pads"}, {"p"}), "mode", std::string("reflect"));
  model.Node("QuantizeLinear", {"p", "s", "z"}, {"q"});
  Conv("q", "o1", 2);
  model.Node("Pad", {"c1", "run_pads"}, {"rp"});
  Conv("rp", "o2", 3);
  model.Output("o1", DataType::kUint8, {1, 8, 9, 9});
  model.Output("o2", DataType::kUint8, {}, false);
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Entered(), (std::vector<std::string>{"rp", "x"}));
  EXPECT_EQ(Transposes(), 5);  // x and rp in; c1 (for the plain Pad), o1 and o2 out
  for (const Node& n : graph().nodes) {
    if (n.op_type() != "Pad") continue;
    if (n.proto->input(1) == "run_pads") {
      EXPECT_EQ(n.proto->input(0), "c1");
    } else {
      EXPECT_EQ(n.proto->input(0), "l/nhwc");
      const Tensor& pads = graph().constants.at(n.proto->input(1));
      EXPECT_EQ(std::vector<int64_t>(pads.data<int64_t>(), pads.data<int64_t>() + 8),
                (std::vector<int64_t>{0, 1, 2, 0, 0, 2, 1, 0}));
    }
  }
  ExpectSameOutputs({{"x", Bytes({1, 8, 6, 6}, 1)},
                     {"run_pads", Tensor::FromVector<int64_t>({8}, {0, 0, 1, 1, 0, 0, 1, 1})}},
                    0.0);
}

// DenseNet's pre-activation conv -> DQ -> BatchNormalization -> Relu -> Q -> conv once the QDQ
// fusion made the middle a per-channel ByteLookup: it runs channels-last with axis 3, so the
// region goes on through it (before: the BatchNormalization was float, a Transpose out of the
// region before the DQ and one back after the Q, 124 in DenseNet-121).
TEST_F(QuantLayoutTest, APerChannelLookupStaysInTheRegion) {
  model.Input("x", DataType::kUint8, {1, 8, 6, 6});
  Tensor params(DataType::kFloat, {8});
  for (int64_t c = 0; c < 8; ++c) params.mutable_data<float>()[c] = 0.5f + 0.25f * static_cast<float>(c);
  model.Initializer("bn_scale", params);
  model.Initializer("bn_mean", params);
  model.Initializer("bn_var", params);
  model.Initializer("bn_bias", Tensor::FromVector<float>({8}, {0.1f, -0.2f, 0.3f, -0.4f, 0.5f, -0.6f, 0.7f, -0.8f}));
  model.Initializer("rs", Tensor::Scalar<float>(0.02f));
  model.Initializer("rz", Tensor::Scalar<uint8_t>(0));
  Conv("x", "c1", 1);
  model.Node("DequantizeLinear", {"c1", "s", "z"}, {"f"});
  model.Node("BatchNormalization", {"f", "bn_scale", "bn_bias", "bn_mean", "bn_var"}, {"bn"});
  model.Node("Relu", {"bn"}, {"r"});
  model.Node("QuantizeLinear", {"r", "rs", "rz"}, {"q"});
  Conv("q", "out", 2);
  model.Output("out", DataType::kUint8, {1, 8, 6, 6});
  ASSERT_TRUE(FuseQdq(&graph()).ok());
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Transposes(), 2);  // x in, out out
  const Node* lookup = nullptr;
  for (const Node& n : graph().nodes) lookup = n.op_type() == "ByteLookup" ? &n : lookup;
  ASSERT_NE(lookup, nullptr);
  EXPECT_EQ(lookup->proto->input(0), "c1/nhwc");
  const auto* axis = Attr(*lookup->proto, "axis");
  ASSERT_NE(axis, nullptr);
  EXPECT_EQ(axis->i(), 3);
  ExpectSameOutputs({{"x", Bytes({1, 8, 6, 6}, 1)}}, 0.0);
}

// YOLOv8's C2f block: conv -> Split over channels into halves -> conv on one -> QLinearConcat of
// both. The Split stays in the region (axis 3), so do both halves: two Transposes, the image in
// and the result out (before: one out before the Split and one back into each reader, four).
// A Split along another axis stays plain.
TEST_F(QuantLayoutTest, ASplitOverChannelsStaysInTheRegion) {
  model.Input("x", DataType::kUint8, {1, 8, 6, 6});
  Conv("x", "c1", 1);
  model.Initializer("halves", Tensor::FromVector<int64_t>({2}, {4, 4}));
  SetAttr(model.Node("Split", {"c1", "halves"}, {"a", "b"}), "axis", int64_t{1});
  Tensor narrow(DataType::kInt8, {4, 4, 3, 3});
  for (int64_t i = 0; i < narrow.size(); ++i) narrow.mutable_data<int8_t>()[i] = static_cast<int8_t>(i % 29 - 14);
  model.Initializer("w_b", narrow);
  SetAttr(model.Node("QLinearConv", {"b", "s", "z", "w_b", "ws", "wz", "s", "z"}, {"cb"}), "pads",
          std::vector<int64_t>{1, 1, 1, 1});
  auto& cat = model.Node("QLinearConcat", {"s", "z", "a", "s", "z", "cb", "s", "z"}, {"cat"});
  cat.set_domain(kMsDomain);
  SetAttr(cat, "axis", int64_t{1});
  Conv("cat", "out", 2);
  SetAttr(model.Node("Split", {"c1"}, {"top", "bottom"}), "axis", int64_t{2});
  model.Output("out", DataType::kUint8, {1, 8, 6, 6});
  model.Output("top", DataType::kUint8, {1, 8, 3, 6});
  model.Output("bottom", DataType::kUint8, {1, 8, 3, 6});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Entered(), (std::vector<std::string>{"x"}));
  EXPECT_EQ(Transposes(), 3);  // x in; out, and c1 for the plain Split over rows, out
  for (const Node& n : graph().nodes) {
    if (n.op_type() != "Split") continue;
    const bool channels = n.proto->output(0) != "top";
    EXPECT_EQ(Attr(*n.proto, "axis")->i(), channels ? 3 : 2);
    EXPECT_EQ(n.proto->input(0), channels ? "c1/nhwc" : "c1");
  }
  ExpectSameOutputs({{"x", Bytes({1, 8, 6, 6}, 1)}}, 0.0);
}

// An FPN's upsampling between quantized convolutions: nearest Resize by constant scales and by
// constant sizes run channels-last with those reordered; a linear one stays plain (its
// passes round in turn, and its float image path wants NCHW).
TEST_F(QuantLayoutTest, ANearestResizeStaysInTheRegion) {
  model.Input("x", DataType::kUint8, {1, 8, 3, 4});
  model.Initializer("scales", Tensor::FromVector<float>({4}, {1.f, 1.f, 2.f, 3.f}));
  model.Initializer("sizes", Tensor::FromVector<int64_t>({4}, {1, 8, 5, 7}));
  model.Initializer("no_scales", Tensor(DataType::kFloat, {0}));
  Conv("x", "c1", 1);
  model.Node("Resize", {"c1", "", "scales"}, {"up"});
  Conv("up", "o1", 2);
  model.Node("Resize", {"c1", "", "no_scales", "sizes"}, {"sized"});
  Conv("sized", "o2", 3);
  SetAttr(model.Node("Resize", {"c1", "", "scales"}, {"linear"}), "mode", std::string("linear"));
  Conv("linear", "o3", 4);
  model.Output("o1", DataType::kUint8, {1, 8, 6, 12});
  model.Output("o2", DataType::kUint8, {1, 8, 5, 7});
  model.Output("o3", DataType::kUint8, {1, 8, 6, 12});
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Entered(), (std::vector<std::string>{"linear", "x"}));
  EXPECT_EQ(Transposes(), 6);  // x and linear in; c1 for the linear Resize, o1, o2, o3 out
  for (const Node& n : graph().nodes) {
    if (n.op_type() != "Resize") continue;
    if (Attr(*n.proto, "mode") != nullptr) {
      EXPECT_EQ(n.proto->input(0), "c1");
      continue;
    }
    EXPECT_EQ(n.proto->input(0), "c1/nhwc");
    const bool sized = n.proto->input_size() > 3;
    const Tensor& t = graph().constants.at(n.proto->input(sized ? 3 : 2));
    if (sized) {
      EXPECT_EQ(std::vector<int64_t>(t.data<int64_t>(), t.data<int64_t>() + 4), (std::vector<int64_t>{1, 5, 7, 8}));
    } else {
      EXPECT_EQ(std::vector<float>(t.data<float>(), t.data<float>() + 4), (std::vector<float>{1.f, 2.f, 3.f, 1.f}));
    }
  }
  ExpectSameOutputs({{"x", Bytes({1, 8, 3, 4}, 1)}}, 0.0);
}

// ONNX Runtime's saved QOperator form of a SiLU between convolutions: QLinearConv ->
// QLinearSigmoid and QLinearMul (com.microsoft, whose output types the load does not infer) ->
// QLinearConv. Once they are one ByteLookup, its table's type is the next convolution's input
// type: both convolutions run channels-last, one Transpose in and one out (the second had stayed
// plain, between two Transposes).
TEST_F(QuantLayoutTest, AConvolutionAfterAFusedSiluRunsChannelsLast) {
  model.Input("x", DataType::kUint8, {1, 8, 6, 6});
  model.Initializer("gs", Tensor::Scalar<float>(1.0f / 255));
  model.Initializer("gz", Tensor::Scalar<uint8_t>(0));
  Conv("x", "c1", 1);
  model.Node("QLinearSigmoid", {"c1", "s", "z", "gs", "gz"}, {"g"}).set_domain(kMsDomain);
  model.Node("QLinearMul", {"c1", "s", "z", "g", "gs", "gz", "s", "z"}, {"m"}).set_domain(kMsDomain);
  Conv("m", "out", 2);
  model.Output("out", DataType::kUint8, {1, 8, 6, 6});
  ASSERT_TRUE(FuseQdq(&graph()).ok());
  ASSERT_TRUE(FoldConstants(&graph(), GlobalKernelRegistry(), SessionLimits{}).ok());
  ASSERT_TRUE(UseChannelsLastQuant(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Transpose", kNhwc, std::string(kOnnxflowDomain) + ".ByteLookup", kNhwc, "Transpose"}));
  ExpectSameOutputs({{"x", Bytes({1, 8, 6, 6}, 1)}}, 0.0);
}

}  // namespace
}  // namespace onnxflow::graph
