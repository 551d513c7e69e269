// FuseChannelScaleIntoConv (graph/channel_scale_fusion.h): a squeeze-and-excitation Mul goes into
// the 1 x 1 BlockedConv that reads it, as X_SCALE; Muls whose other operand is not one pixel per
// channel, or whose product something else reads, stay. Outputs against the unoptimized model.
#include "graph/channel_scale_fusion.h"

#include <algorithm>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/blocked_layout.h"
#include "graph/graph_test.h"
#include "ops/framework/domains.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;

class ChannelScaleTest : public GraphTest {
 protected:
  // x [1, 4, 6, 6] -> Conv -> "c" [1, 32, 6, 6]; the gate GlobalAveragePool(c) -> Conv 32 -> 8 ->
  // Relu -> Conv 8 -> 32 -> `gate_op` -> "gate" [1, 32, 1, 1].
  void MapAndGate(const char* gate_op = "Sigmoid") {
    model.Input("x", DataType::kFloat, {1, 4, 6, 6});
    model.Initializer("w", Floats({32, 4, 3, 3}, 2));
    SetAttr(model.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
    model.Node("GlobalAveragePool", {"c"}, {"pooled"});
    model.Initializer("w_squeeze", Floats({8, 32, 1, 1}, 3));
    model.Initializer("b_squeeze", Floats({8}, 4));
    model.Node("Conv", {"pooled", "w_squeeze", "b_squeeze"}, {"squeezed"}, "squeeze");
    model.Node("Relu", {"squeezed"}, {"relu"});
    model.Initializer("w_excite", Floats({32, 8, 1, 1}, 5));
    model.Initializer("b_excite", Floats({32}, 6));
    model.Node("Conv", {"relu", "w_excite", "b_excite"}, {"excited"}, "excite");
    model.Node(gate_op, {"excited"}, {"gate"});
  }
  // "scaled" -> Conv 32 -> 16 (1 x 1) -> "y".
  void ProjectScaled() {
    model.Initializer("w_project", Floats({16, 32, 1, 1}, 7));
    model.Node("Conv", {"scaled", "w_project"}, {"y"}, "project");
    model.Output("y", DataType::kFloat, {1, 16, 6, 6});
  }
  int Muls() {
    const std::vector<std::string> ops = Ops();
    return static_cast<int>(std::count(ops.begin(), ops.end(), "Mul"));
  }
  // The BlockedConv that reads an X_SCALE.
  const onnx::NodeProto* ScaledConv() {
    for (const Node& n : graph().nodes) {
      if (n.op_type() == "BlockedConv" && n.proto->input_size() > 5) return n.proto.get();
    }
    return nullptr;
  }
};

TEST_F(ChannelScaleTest, SqueezeExcitationGateGoesIntoTheProjection) {
  MapAndGate();
  model.Node("Mul", {"c", "gate"}, {"scaled"});
  ProjectScaled();
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Muls(), 0);
  const onnx::NodeProto* project = ScaledConv();
  ASSERT_NE(project, nullptr);
  ASSERT_EQ(project->input_size(), 6);
  EXPECT_EQ(project->input(0), "c/blocked");  // the map and the gate in the layout
  EXPECT_EQ(project->input(5), "gate/blocked");
  ExpectSameOutputs({{"x", Floats({1, 4, 6, 6}, 1)}}, 1e-4, 1e-5);
}

// The gate first, and MobileNetV3's HardSigmoid.
TEST_F(ChannelScaleTest, EitherOperandOrderAndOtherGates) {
  MapAndGate("HardSigmoid");
  model.Node("Mul", {"gate", "c"}, {"scaled"});
  ProjectScaled();
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Muls(), 0);
  ExpectSameOutputs({{"x", Floats({1, 4, 6, 6}, 1)}}, 1e-4, 1e-5);
}

// A product of two maps is not a scale per channel.
TEST_F(ChannelScaleTest, ProductOfTwoMapsStays) {
  MapAndGate();
  model.Initializer("w2", Floats({32, 4, 1, 1}, 8));
  model.Node("Conv", {"x", "w2"}, {"c2"}, "conv2");
  model.Node("Mul", {"c", "c2"}, {"scaled"});
  ProjectScaled();
  model.Output("gate", DataType::kFloat, {1, 32, 1, 1});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Muls(), 1);
  ExpectSameOutputs({{"x", Floats({1, 4, 6, 6}, 1)}}, 1e-4, 1e-5);
}

// The product read by something else too (here, the graph's output) is computed.
TEST_F(ChannelScaleTest, ProductReadElsewhereStays) {
  MapAndGate();
  model.Node("Mul", {"c", "gate"}, {"scaled"});
  ProjectScaled();
  model.Output("scaled", DataType::kFloat, {1, 32, 6, 6});
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Muls(), 1);
  ExpectSameOutputs({{"x", Floats({1, 4, 6, 6}, 1)}}, 1e-4, 1e-5);
}

// A gate the proof does not follow (a padded convolution on the pooled map, whose 3 x 3 output a
// 3 x 3 convolution takes back to one pixel) keeps its Mul.
TEST_F(ChannelScaleTest, GateOfMoreThanOnePixelStays) {
  model.Input("x", DataType::kFloat, {1, 4, 6, 6});
  model.Initializer("w", Floats({32, 4, 3, 3}, 2));
  SetAttr(model.Node("Conv", {"x", "w"}, {"c"}, "conv"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  model.Node("GlobalAveragePool", {"c"}, {"pooled"});
  model.Initializer("w_excite", Floats({32, 32, 1, 1}, 5));
  SetAttr(model.Node("Conv", {"pooled", "w_excite"}, {"excited"}, "excite"), "pads", std::vector<int64_t>{1, 1, 1, 1});
  model.Node("Sigmoid", {"excited"}, {"gate"});
  model.Initializer("w_pool", Floats({32, 32, 3, 3}, 9));
  model.Node("Conv", {"gate", "w_pool"}, {"gate3"}, "to_one");  // 3 x 3 -> 1 x 1, then broadcast
  model.Node("Mul", {"c", "gate3"}, {"scaled"});
  ProjectScaled();
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Muls(), 1);
  ExpectSameOutputs({{"x", Floats({1, 4, 6, 6}, 1)}}, 1e-3, 1e-4);  // sums of 288 products, twice
}

}  // namespace
}  // namespace onnxflow::graph
