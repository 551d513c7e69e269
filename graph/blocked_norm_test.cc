// Group and instance normalization in the blocked layout (graph/blocked_layout.cc): torch.onnx's
// Reshape -> InstanceNormalization -> Reshape export of GroupNorm read as GroupNormalization
// (FuseGroupNormExport), GroupNormalization 18 and 21 and InstanceNormalization of blocked values as
// BlockedGroupNormalization, the per-channel Mul and Add after it taken into its parameters, and the
// SiLU (or Relu) after it into its epilogue, so that a GroupNorm -> SiLU -> Conv block has no
// reorder; near misses that must stay as they are; outputs against the unoptimized model (within
// 1e-3 relative, as the other blocked tests: the blocked convolutions sum in another order).
#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "graph/blocked_layout.h"
#include "graph/graph_test.h"
#include "ops/framework/domains.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;
using Names = std::vector<std::string>;


const std::string d = std::string(kOnnxflowDomain) + ".";

class BlockedNormTest : public GraphTest {
 protected:
  explicit BlockedNormTest(int opset = 17) : GraphTest(opset) {}

  // x [1, 4, 6, 6] -> Conv -> "c" [1, 32, 6, 6].
  void ConvFromX() {
    model.Input("x", DataType::kFloat, {1, 4, 6, 6});
    model.Initializer("w", Floats({32, 4, 3, 3}, 2));
    model.Initializer("b", Floats({32}, 3));
    SetAttr(model.Node("Conv", {"x", "w", "b"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  }

  // torch.onnx's GroupNorm(8, 32) of "c" into "gn": Reshape(c, [0, 8, -1]) -> InstanceNormalization
  // -> Reshape(., `back_shape`, Shape(c) when empty) -> Mul(gamma) -> Add(beta).
  void ExportedGroupNorm(const std::vector<int64_t>& split_shape = {0, 8, -1}, bool constant_back = false) {
    model.Initializer("split_shape", Tensor::FromVector<int64_t>({3}, split_shape));
    model.Node("Reshape", {"c", "split_shape"}, {"grouped"});
    model.Initializer("ones", Floats({8}, 4, 1.0f));
    model.Initializer("zeros", Floats({8}, 5));
    SetAttr(model.Node("InstanceNormalization", {"grouped", "ones", "zeros"}, {"in"}), "epsilon", 1e-6f);
    if (constant_back) {
      model.Initializer("back_shape", Tensor::FromVector<int64_t>({4}, {1, 32, 6, 6}));
    } else {
      model.Node("Shape", {"c"}, {"back_shape"});
    }
    model.Node("Reshape", {"in", "back_shape"}, {"back"});
    model.Initializer("gamma", Floats({32, 1, 1}, 6, 1.0f));
    model.Initializer("beta", Floats({32, 1, 1}, 7));
    model.Node("Mul", {"back", "gamma"}, {"scaled"});
    model.Node("Add", {"scaled", "beta"}, {"gn"});
  }

  // SiLU of `v` written out, then a Conv to 16 channels: "y" [1, 16, 6, 6].
  void SiluConv(const std::string& v) {
    model.Node("Sigmoid", {v}, {"sig"});
    model.Node("Mul", {v, "sig"}, {"silu"});
    model.Initializer("w2", Floats({16, 32, 3, 3}, 8));
    SetAttr(model.Node("Conv", {"silu", "w2"}, {"y"}, "conv2"), "pads", std::vector<int64_t>{1, 1, 1, 1});
    model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  }

  std::vector<NamedValue> Inputs() { return {{"x", Floats({1, 4, 6, 6}, 1)}}; }
};

// The whole block runs blocked: the normalization, its affine map and the SiLU are one
// BlockedGroupNormalization between the two convolutions; the Shape is left unread.
TEST_F(BlockedNormTest, ExportedGroupNormThenSiluStaysBlocked) {
  ConvFromX();
  ExportedGroupNorm();
  SiluConv("gn");
  EXPECT_EQ(Run("FuseGroupNormExport", FuseGroupNormExport), 1);
  EXPECT_EQ(Only("GroupNormalization").opset, 18);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedGroupNormalization", d + "BlockedShape", d + "BlockedConv",
                          d + "FromBlocked"}));
  const Node& norm = Only("BlockedGroupNormalization");
  EXPECT_EQ(Attr(*norm.proto, "activation")->s(), "Swish");
  EXPECT_EQ(Attr(*norm.proto, "num_groups")->i(), 8);
  ExpectSameOutputs(Inputs(), 1e-3);
}

// A Reshape to a literal batch of 1 (not provably x's batch) and a Reshape back to a constant
// shape are not GroupNorm's export: the chain stays, and leaves the blocked layout.
TEST_F(BlockedNormTest, ReshapesThatAreNotTheExportStay) {
  ConvFromX();
  ExportedGroupNorm({1, 8, -1});
  SiluConv("gn");
  EXPECT_EQ(Run("FuseGroupNormExport", FuseGroupNormExport), 0);
  ExpectSameOutputs(Inputs(), 1e-3);
}

TEST_F(BlockedNormTest, ConstantShapeBackIsNotTheExport) {
  ConvFromX();
  ExportedGroupNorm({0, 8, -1}, /*constant_back=*/true);
  SiluConv("gn");
  EXPECT_EQ(Run("FuseGroupNormExport", FuseGroupNormExport), 0);
}

// The instance normalization's output read elsewhere too: not fused.
TEST_F(BlockedNormTest, InstanceNormReadTwiceStays) {
  ConvFromX();
  ExportedGroupNorm();
  SiluConv("gn");
  model.Output("in", DataType::kFloat, {1, 8, 36});
  EXPECT_EQ(Run("FuseGroupNormExport", FuseGroupNormExport), 0);
}

// InstanceNormalization of a blocked value (a style-transfer network's) runs blocked and takes the
// Relu after it; with a scale read at run time it stays plain, behind a reorder.
TEST_F(BlockedNormTest, InstanceNormalizationOfABlockedValue) {
  ConvFromX();
  model.Initializer("s", Floats({32}, 4, 1.0f));
  model.Initializer("t", Floats({32}, 5));
  model.Node("InstanceNormalization", {"c", "s", "t"}, {"in"});
  model.Node("Relu", {"in"}, {"r"});
  model.Initializer("w2", Floats({16, 32, 1, 1}, 8));
  model.Node("Conv", {"r", "w2"}, {"y"}, "conv2");
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedGroupNormalization", d + "BlockedConv", d + "FromBlocked"}));
  EXPECT_EQ(Attr(*Only("BlockedGroupNormalization").proto, "activation")->s(), "Relu");
  EXPECT_EQ(Attr(*Only("BlockedGroupNormalization").proto, "num_groups")->i(), 32);
  ExpectSameOutputs(Inputs(), 1e-3);
}

TEST_F(BlockedNormTest, RunTimeScaleStaysPlain) {
  ConvFromX();
  model.Input("s", DataType::kFloat, {32});
  model.Initializer("t", Floats({32}, 5));
  model.Node("InstanceNormalization", {"c", "s", "t"}, {"y"});
  model.Output("y", DataType::kFloat, {1, 32, 6, 6});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "FromBlocked", "InstanceNormalization"}));
}

// GroupNormalization 21 (per-channel parameters) and 18 (per-group ones, then the per-channel Mul
// and Add that an exporter writes after it): both one BlockedGroupNormalization with the SiLU.
class GroupNormalization21Test : public BlockedNormTest {
 protected:
  GroupNormalization21Test() : BlockedNormTest(21) {}
};

TEST_F(GroupNormalization21Test, RunsBlockedWithItsSilu) {
  ConvFromX();
  model.Initializer("s", Floats({32}, 4, 1.0f));
  model.Initializer("t", Floats({32}, 5));
  SetAttr(model.Node("GroupNormalization", {"c", "s", "t"}, {"gn"}), "num_groups", int64_t{4});
  SiluConv("gn");
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedGroupNormalization", d + "BlockedConv", d + "FromBlocked"}));
  ExpectSameOutputs(Inputs(), 1e-3);
}

// The SiLU's input read by a third node: the Sigmoid and Mul stay (blocked, elementwise).
TEST_F(GroupNormalization21Test, SiluOfAValueReadElsewhereStays) {
  ConvFromX();
  model.Initializer("s", Floats({32}, 4, 1.0f));
  model.Initializer("t", Floats({32}, 5));
  SetAttr(model.Node("GroupNormalization", {"c", "s", "t"}, {"gn"}), "num_groups", int64_t{4});
  SiluConv("gn");
  model.Node("Relu", {"gn"}, {"other"});
  model.Output("other", DataType::kFloat, {1, 32, 6, 6});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::vector<std::string> ops = Ops();
  EXPECT_EQ(std::count(ops.begin(), ops.end(), "Sigmoid"), 1);
  EXPECT_FALSE(HasEpilogue(Only("BlockedGroupNormalization")));
  ExpectSameOutputs(Inputs(), 1e-3);
}

class GroupNormalization18Test : public BlockedNormTest {
 protected:
  GroupNormalization18Test() : BlockedNormTest(18) {}
};

TEST_F(GroupNormalization18Test, PerGroupParametersAndTheAffineAfter) {
  ConvFromX();
  model.Initializer("s", Floats({4}, 4, 1.0f));
  model.Initializer("t", Floats({4}, 5));
  SetAttr(model.Node("GroupNormalization", {"c", "s", "t"}, {"norm"}), "num_groups", int64_t{4});
  model.Initializer("gamma", Floats({32, 1, 1}, 6, 1.0f));
  model.Initializer("beta", Floats({32, 1, 1}, 7));
  model.Node("Mul", {"norm", "gamma"}, {"scaled"});
  model.Node("Add", {"scaled", "beta"}, {"gn"});
  SiluConv("gn");
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedGroupNormalization", d + "BlockedConv", d + "FromBlocked"}));
  ExpectSameOutputs(Inputs(), 1e-3);
}

// PRelu of slopes constant per channel (insightface's IR-ResNet: Conv -> PRelu -> Conv) runs
// blocked, as a BlockedBatchNormalization x * 1 + 0 with the slopes; no reorder between the
// convolutions. [C, 1, 1], [1, C, 1, 1] and one number are per channel.
class BlockedPReluTest : public BlockedNormTest {
 protected:
  // Conv -> "c" -> PRelu(slope of `slope_shape`, constant) -> Conv 1 x 1 -> "y".
  void ConvPReluConv(const Shape& slope_shape) {
    ConvFromX();
    model.Initializer("slope", Floats(slope_shape, 9));
    model.Node("PRelu", {"c", "slope"}, {"p"});
    // 1 x 1: a 3 x 3 would run as Winograd, whose rounding differs from the plain convolution's by
    // more than the comparison's 1e-6 + 1e-3 relative where the sum cancels.
    model.Initializer("w2", Floats({16, 32, 1, 1}, 8));
    model.Node("Conv", {"p", "w2"}, {"y"}, "conv2");
    model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  }

  void ExpectBlocked() {
    ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
    EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "BlockedBatchNormalization", d + "BlockedConv", d + "FromBlocked"}));
    EXPECT_EQ(Only("BlockedBatchNormalization").proto->input_size(), 6);
    ExpectSameOutputs(Inputs(), 1e-3);
  }

  // x [1, 4, 6, 32] -> Conv -> PRelu(slope) -> "y": W is 32 wide, as many as the channels.
  void ConvThenPRelu(const Shape* constant_slope) {
    model.Input("x", DataType::kFloat, {1, 4, 6, 32});
    model.Initializer("w", Floats({32, 4, 3, 3}, 2));
    SetAttr(model.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
    if (constant_slope != nullptr) {
      model.Initializer("slope", Floats(*constant_slope, 9));
    } else {
      model.Input("slope", DataType::kFloat, {32, 1, 1});
    }
    model.Node("PRelu", {"c", "slope"}, {"y"});
    model.Output("y", DataType::kFloat, {1, 32, 6, 32});
  }

  void ExpectPlain() {
    ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
    EXPECT_EQ(Ops(), (Names{d + "BlockedConv", d + "FromBlocked", "PRelu"}));
  }
};

TEST_F(BlockedPReluTest, SlopesOfShapeC11) {
  ConvPReluConv({32, 1, 1});
  ExpectBlocked();
}

TEST_F(BlockedPReluTest, SlopesOfShape1C11) {
  ConvPReluConv({1, 32, 1, 1});
  ExpectBlocked();
}

TEST_F(BlockedPReluTest, OneSlope) {
  ConvPReluConv({1});
  ExpectBlocked();
}

// Near misses, plain behind a reorder: a 1-D slope of C values broadcasts over W, not over the
// channels; a slope per pixel; a slope read at run time.
TEST_F(BlockedPReluTest, SlopeOverWidthStaysPlain) {
  const Shape slope{32};
  ConvThenPRelu(&slope);
  ExpectPlain();
}

TEST_F(BlockedPReluTest, SlopePerPixelStaysPlain) {
  const Shape slope{32, 6, 32};
  ConvThenPRelu(&slope);
  ExpectPlain();
}

TEST_F(BlockedPReluTest, RunTimeSlopeStaysPlain) {
  ConvThenPRelu(nullptr);
  ExpectPlain();
}

// A pre-activation BatchNormalization and the PRelu after it (IR-ResNet's BN -> PRelu) are one
// pass: the normalization's affine map, then the slopes; a Relu after that is its epilogue.
TEST_F(BlockedNormTest, NormalizationThenPReluThenReluIsOnePass) {
  ConvFromX();
  model.Node("Add", {"c", "c"}, {"sum"});  // not a Conv's output: the BN cannot fold into weights
  model.Initializer("s", Floats({32}, 4, 1.0f));
  model.Initializer("t", Floats({32}, 5));
  model.Initializer("mean", Floats({32}, 6));
  model.Initializer("var", Floats({32}, 7, 2.0f));
  model.Node("BatchNormalization", {"sum", "s", "t", "mean", "var"}, {"bn"});
  model.Initializer("slope", Floats({32, 1, 1}, 9));
  model.Node("PRelu", {"bn", "slope"}, {"p"});
  model.Node("Relu", {"p"}, {"r"});
  model.Initializer("w2", Floats({16, 32, 1, 1}, 8));
  model.Node("Conv", {"r", "w2"}, {"y"}, "conv2");
  model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{d + "BlockedConv", "Add", d + "BlockedBatchNormalization", d + "BlockedConv",
                          d + "FromBlocked"}));
  EXPECT_EQ(Attr(*Only("BlockedBatchNormalization").proto, "activation")->s(), "Relu");
  ExpectSameOutputs(Inputs(), 1e-3);
}

}  // namespace
}  // namespace onnxflow::graph
