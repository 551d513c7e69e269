// A depthwise convolution of a plain value with a large window (ConvNeXt's 7x7 on its residual
// stream) runs blocked behind a reorder in and out (graph/blocked_layout.cc); a small window or
// channels that are not whole blocks stay on the plain kernel. Grouped convolutions likewise where
// BlockedConv runs them faster. Outputs against the unoptimized model.
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

// Grouped convolutions run blocked where BlockedConv is faster at them (GroupedConvRunsBlocked):
// strided ones and groups of whole blocks; stride-1 groups narrower than a block stay plain.
class GroupedConvTest : public GraphTest {
 protected:
  // Input x [1, channels, 10, 10] -> Conv of `group` groups, 3x3, pads 1, `stride` -> y.
  void Grouped(int64_t channels, int64_t group, int64_t stride) {
    const int64_t out = (10 + 2 - 3) / stride + 1;
    model.Input("x", DataType::kFloat, {1, channels, 10, 10});
    model.Initializer("w", Floats({channels, channels / group, 3, 3}, 2));
    model.Initializer("b", Floats({channels}, 3));
    auto& conv = model.Node("Conv", {"x", "w", "b"}, {"y"}, "grouped");
    SetAttr(conv, "group", group);
    SetAttr(conv, "pads", std::vector<int64_t>{1, 1, 1, 1});
    SetAttr(conv, "strides", std::vector<int64_t>{stride, stride});
    model.Output("y", DataType::kFloat, {1, channels, out, out});
  }
};

TEST_F(GroupedConvTest, StridedNarrowGroupsRunBlocked) {
  Grouped(32, 8, 2);  // ResNeXt's downsampling 3x3, groups of 4
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{d + "ToBlocked", d + "BlockedConv", d + "FromBlocked"}));
  ExpectSameOutputs({{"x", Floats({1, 32, 10, 10}, 1)}}, 1e-4);
}

TEST_F(GroupedConvTest, GroupsOfWholeBlocksRunBlocked) {
  Grouped(64, 2, 1);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  const std::string d = std::string(kOnnxflowDomain) + ".";
  EXPECT_EQ(Ops(), (Names{d + "ToBlocked", d + "BlockedConv", d + "FromBlocked"}));
  // Sums of 288 terms of about 1 in another order: within 1e-5 where one cancels to near 0.
  ExpectSameOutputs({{"x", Floats({1, 64, 10, 10}, 1)}}, 1e-4, 1e-5);
}

TEST_F(GroupedConvTest, StrideOneNarrowGroupsStayPlain) {
  Grouped(32, 4, 1);
  ASSERT_TRUE(UseBlockedLayout(&graph()).ok());
  EXPECT_EQ(Ops(), (Names{"Conv"}));
}

}  // namespace
}  // namespace onnxflow::graph
