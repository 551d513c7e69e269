// Up-sampling networks in the blocked layout (graph/blocked_layout.cc): a style-transfer block
// (reflect Pad -> Conv -> InstanceNormalization -> Relu -> ConvTranspose stride 2 with
// output_padding) and a DCGAN block (ConvTranspose -> BatchNormalization -> Relu, its plain input
// reordered in) run with no reorder inside, the normalization and Relu folded into the
// ConvTranspose (FuseIntoConvTranspose); dilations, output_shape and asymmetric pads convert too;
// near misses stay plain (group 2, run-time weights, fewer than 16 output channels, pads over
// channels or read at run time, an infinite constant). Outputs against the unoptimized model
// (within 1e-3 relative, as the other blocked tests: the blocked kernels sum in another order).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <utility>
#include <string>
#include <vector>

#include "graph/blocked_layout.h"
#include "graph/graph_test.h"
#include "ops/framework/domains.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;
using Names = std::vector<std::string>;
using Ints = std::vector<int64_t>;

const std::string d = std::string(kOnnxflowDomain) + ".";

class BlockedUpsampleTest : public GraphTest {
 protected:
  // x [1, 3, 8, 8] -> Conv 3x3 (a stem) -> "c" [1, 32, 8, 8].
  void StemConv() {
    model.Input("x", DataType::kFloat, {1, 3, 8, 8});
    model.Initializer("w", Floats({32, 3, 3, 3}, 2));
    model.Initializer("b", Floats({32}, 3));
    SetAttr(model.Node("Conv", {"x", "w", "b"}, {"c"}, "stem"), "pads", Ints{1, 1, 1, 1});
  }

  // Pad of "c" by constant `pads`, `mode`.
  onnx::NodeProto& PadC(const std::string& out, const Ints& pads, const std::string& mode) {
    model.Initializer(out + "_pads", Tensor::FromVector<int64_t>({8}, pads));
    auto& pad = model.Node("Pad", {"c", out + "_pads"}, {out}, out);
    SetAttr(pad, "mode", mode);
    return pad;
  }

  std::vector<NamedValue> Inputs() { return {{"x", Floats({1, 3, 8, 8}, 1)}}; }
};

// ReflectionPad -> Conv (stride 2) -> InstanceNorm -> Relu -> ConvTranspose(3x3, stride 2, pad 1,
// output_padding 1) -> InstanceNorm -> Relu: one blocked region, the only reorder at its end.
TEST_F(BlockedUpsampleTest, StyleTransferBlockStaysBlocked) {
  StemConv();
  PadC("padded", {0, 0, 1, 1, 0, 0, 1, 1}, "reflect");
  model.Initializer("w2", Floats({32, 32, 3, 3}, 4));
  // Stride 2, as the network's down-sampling layers (a stride-1 3x3 would run as Winograd, whose
  // rounding the instance normalizations after it magnify past the comparison's 1e-6 + 1e-3 |y|).
  SetAttr(model.Node("Conv", {"padded", "w2"}, {"c2"}, "conv2"), "strides", Ints{2, 2});
  model.Initializer("s1", Floats({32}, 5, 1.0f));
  model.Initializer("t1", Floats({32}, 6));
  model.Node("InstanceNormalization", {"c2", "s1", "t1"}, {"in1"});
  model.Node("Relu", {"in1"}, {"r1"});
  model.Initializer("wt", Floats({32, 16, 3, 3}, 7));
  model.Initializer("bt", Floats({16}, 8));
  auto& up = model.Node("ConvTranspose", {"r1", "wt", "bt"}, {"up"}, "up");
  SetAttr(up, "strides", Ints{2, 2});
  SetAttr(up, "pads", Ints{1, 1, 1, 1});
  SetAttr(up, "output_padding", Ints{1, 1});
  model.Initializer("s2", Floats({16}, 9, 1.0f));
  model.Initializer("t2", Floats({16}, 10));
  model.Node("InstanceNormalization", {"up", "s2", "t2"}, {"in2"});
  model.Node("Relu", {"in2"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 16, 8, 8});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedPad", d + "BlockedConv", d + "BlockedGroupNormalization",
                          d + "BlockedConvTranspose", d + "BlockedGroupNormalization", d + "FromBlocked"}));
  const Node& pad = Only("BlockedPad");
  EXPECT_EQ(Attr(*pad.proto, "mode")->s(), "reflect");
  EXPECT_EQ(pad.proto->input_size(), 1);
  ExpectSameOutputs(Inputs(), 1e-3);
}

// DCGAN: ConvTranspose (no bias) -> BatchNormalization -> Relu of a plain input is one
// BlockedConvTranspose with the normalization in W and B and the Relu as its epilogue; the last
// ConvTranspose to 3 channels (mostly pad lanes blocked) stays plain behind the reorder.
TEST_F(BlockedUpsampleTest, DcganBatchNormAndReluFoldIntoTheConvTranspose) {
  model.Input("z", DataType::kFloat, {1, 20, 3, 3});
  model.Initializer("w1", Floats({20, 32, 4, 4}, 2));
  auto& up1 = model.Node("ConvTranspose", {"z", "w1"}, {"u1"}, "up1");
  SetAttr(up1, "strides", Ints{2, 2});
  SetAttr(up1, "pads", Ints{1, 1, 1, 1});
  model.Initializer("scale", Floats({32}, 3, 1.0f));
  model.Initializer("bias", Floats({32}, 4));
  model.Initializer("mean", Floats({32}, 5));
  model.Initializer("var", Floats({32}, 6, 2.0f));
  model.Node("BatchNormalization", {"u1", "scale", "bias", "mean", "var"}, {"bn"});
  model.Node("Relu", {"bn"}, {"r"});
  model.Initializer("w2", Floats({32, 3, 4, 4}, 7));
  auto& up2 = model.Node("ConvTranspose", {"r", "w2"}, {"u2"}, "up2");
  SetAttr(up2, "strides", Ints{2, 2});
  SetAttr(up2, "pads", Ints{1, 1, 1, 1});
  model.Node("Tanh", {"u2"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 3, 12, 12});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "ToBlocked", d + "BlockedConvTranspose", d + "FromBlocked", "ConvTranspose", "Tanh"}));
  const Node& up = Only("BlockedConvTranspose");
  EXPECT_EQ(Attr(*up.proto, "activation")->s(), "Relu");
  EXPECT_EQ(up.proto->input_size(), 3);  // the folded B
  ExpectSameOutputs({{"z", Floats({1, 20, 3, 3}, 1)}}, 1e-3);
}

// Dilations, output_shape and asymmetric pads: all BlockedConvTranspose's geometry.
TEST_F(BlockedUpsampleTest, DilationsOutputShapeAndAsymmetricPadsConvert) {
  StemConv();
  model.Initializer("wt", Floats({32, 16, 3, 3}, 4));
  auto& dilated = model.Node("ConvTranspose", {"c", "wt"}, {"t1"}, "dilated");
  SetAttr(dilated, "strides", Ints{2, 3});
  SetAttr(dilated, "dilations", Ints{2, 1});
  SetAttr(dilated, "pads", Ints{0, 1, 2, 0});
  auto& shaped = model.Node("ConvTranspose", {"c", "wt"}, {"t2"}, "shaped");
  SetAttr(shaped, "strides", Ints{2, 2});
  SetAttr(shaped, "output_shape", Ints{16, 17});
  model.Output("t1", DataType::kFloat, {1, 16, 17, 23});
  model.Output("t2", DataType::kFloat, {1, 16, 16, 17});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedConvTranspose", d + "FromBlocked", d + "BlockedConvTranspose",
                          d + "FromBlocked"}));
  ExpectSameOutputs(Inputs(), 1e-3);
}

// What BlockedConvTranspose and BlockedPad do not run stays plain, reading "c" through one reorder:
// a ConvTranspose of 2 groups, one whose weights come at run time, one of 8 output channels; a Pad
// over channels, and one whose pads come at run time.
TEST_F(BlockedUpsampleTest, NearMissesStayPlain) {
  StemConv();
  model.Input("w_run", DataType::kFloat, {32, 16, 2, 2});
  model.Input("pads_run", DataType::kInt64, {8});
  model.Initializer("w_grouped", Floats({32, 8, 2, 2}, 4));
  model.Initializer("w_narrow", Floats({32, 8, 2, 2}, 5));
  SetAttr(model.Node("ConvTranspose", {"c", "w_grouped"}, {"grouped"}, "grouped"), "group", int64_t{2});
  model.Node("ConvTranspose", {"c", "w_run"}, {"run_time"}, "run_time");
  model.Node("ConvTranspose", {"c", "w_narrow"}, {"narrow"}, "narrow");
  PadC("channels", {0, 1, 0, 0, 0, 1, 0, 0}, "constant");
  model.Node("Pad", {"c", "pads_run"}, {"pads_at_run"}, "pads_at_run");
  model.Output("grouped", DataType::kFloat, {1, 16, 9, 9});
  model.Output("run_time", DataType::kFloat, {1, 16, 9, 9});
  model.Output("narrow", DataType::kFloat, {1, 8, 9, 9});
  model.Output("channels", DataType::kFloat, {1, 34, 8, 8});
  model.Output("pads_at_run", DataType::kFloat, {}, /*rank_known=*/false);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "FromBlocked", "ConvTranspose", "ConvTranspose", "ConvTranspose", "Pad",
                          "Pad"}));
  std::vector<NamedValue> inputs = Inputs();
  inputs.push_back({"w_run", Floats({32, 16, 2, 2}, 6)});
  inputs.push_back({"pads_run", Tensor::FromVector<int64_t>({8}, {0, 0, 1, 0, 0, 0, 0, 2})});
  ExpectSameOutputs(inputs, 1e-3);
}

// A Pad of an infinite constant stays plain: BlockedPad would fill the pad lanes with it too, and
// a following convolution's zero weights would turn them into NaN. A finite one converts.
TEST_F(BlockedUpsampleTest, InfiniteConstantPadStaysPlain) {
  StemConv();
  for (const auto& [name, value] :
       {std::pair<std::string, float>{"infinite", std::numeric_limits<float>::infinity()}, {"finite", -2.0f}}) {
    PadC(name, {0, 0, 1, 1, 0, 0, 1, 1}, "constant").add_input(name + "_value");
    model.Initializer(name + "_value", Tensor::FromVector<float>({}, {value}));
    model.Output(name, DataType::kFloat, {1, 32, 10, 10});
  }
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "FromBlocked", "Pad", d + "BlockedPad", d + "FromBlocked"}));
  EXPECT_FLOAT_EQ(Attr(*Only("BlockedPad").proto, "value")->f(), -2.0f);
}

// A ConvTranspose's X whose channels are not W's C (a lie by less than a block, which the blocked
// tensor's pad lanes would hide) stays plain; the Relu between them keeps the region.
TEST_F(BlockedUpsampleTest, ChannelsThatDoNotFitStayPlain) {
  StemConv();
  model.Node("Relu", {"c"}, {"r"});
  model.Initializer("wt", Floats({30, 16, 2, 2}, 4));
  SetAttr(model.Node("ConvTranspose", {"r", "wt"}, {"y"}, "wrong"), "strides", Ints{2, 2});
  model.Output("y", DataType::kFloat, {}, /*rank_known=*/false);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", "Relu", d + "FromBlocked", "ConvTranspose"}));
}

}  // namespace
}  // namespace onnxflow::graph
