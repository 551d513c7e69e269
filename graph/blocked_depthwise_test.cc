// A depthwise convolution of a plain value with a large window (ConvNeXt's 7x7 on its residual
// stream) runs blocked behind a reorder in and out (graph/blocked_layout.cc); a small window or
// channels that are not whole blocks stay on the plain kernel. Outputs against the unoptimized model.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "graph/blocked_layout.h"
#include "graph/graph_test.h"
#include "ops/framework/domains.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;
using Names = std::vector<std::string>;


class PlainInputDepthwiseTest : public GraphTest {
 protected:
  // Input x [1, channels, 9, 9] -> depthwise Conv of a k x k window -> y.
  void Depthwise(int64_t channels, int64_t k) {
    model.Input("x", DataType::kFloat, {1, channels, 9, 9});
    model.Initializer("w", Floats({channels, 1, k, k}, 2));
    model.Initializer("b", Floats({channels}, 3));
    auto& conv = model.Node("Conv", {"x", "w", "b"}, {"y"}, "dw");
    SetAttr(conv, "group", channels);
    SetAttr(conv, "pads", std::vector<int64_t>{k / 2, k / 2, k / 2, k / 2});
    model.Output("y", DataType::kFloat, {1, channels, 9, 9});
  }
};

TEST_F(PlainInputDepthwiseTest, SevenBySevenRunsBlocked) {
  Depthwise(32, 7);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{d + "ToBlocked", d + "BlockedDepthwiseConv", d + "FromBlocked"}));
  ExpectSameOutputs({{"x", Floats({1, 32, 9, 9}, 1)}}, 1e-4);
}

TEST_F(PlainInputDepthwiseTest, ThreeByThreeStaysPlain) {
  Depthwise(32, 3);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Conv"}));
}

TEST_F(PlainInputDepthwiseTest, ChannelsNotWholeBlocksStayPlain) {
  Depthwise(24, 7);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Conv"}));
}

}  // namespace
}  // namespace onnxflow::graph
