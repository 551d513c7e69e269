// ValueRanks (graph/value_rank.h): what a declaration or the producers prove, what they do not
// (an operand of unknown rank, a reduction that drops axes), and the bound on a hostile chain.
#include "graph/value_rank.h"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/graph_test.h"
#include "ops/framework/domains.h"

namespace onnxflow::graph {
namespace {

using tools::SetAttr;
using Ints = std::vector<int64_t>;

class ValueRankTest : public GraphTest {
 protected:
  int64_t Rank(const std::string& v) { return ProvenRank(graph(), v); }
};

TEST_F(ValueRankTest, DeclarationsAndTheOpsThatKeepOrSetARank) {
  model.Input("x", DataType::kFloat, {1, 8, 5, 5});
  model.Input("u", DataType::kFloat, {}, /*rank_known=*/false);
  model.Input("v", DataType::kFloat, {8, 5});
  model.Initializer("c", Tensor(DataType::kFloat, {8, 1, 1}));
  model.Initializer("shape3", Tensor::FromVector<int64_t>({3}, {1, 8, -1}));
  model.Initializer("axis2", Tensor::FromVector<int64_t>({1}, {2}));
  model.Node("Relu", {"x"}, {"r"});
  model.Node("Add", {"r", "c"}, {"a"});      // 4 and 3: 4
  model.Node("Mul", {"v", "c"}, {"m"});      // 2 and 3: 3
  model.Node("Add", {"r", "u"}, {"au"});     // u unknown: the broadcast may be of any rank
  SetAttr(model.Node("Transpose", {"u"}, {"t"}), "perm", Ints{0, 2, 3, 1});
  model.Node("Reshape", {"u", "shape3"}, {"rs"});
  model.Node("Unsqueeze", {"rs", "axis2"}, {"us"});
  model.Node("Squeeze", {"us", "axis2"}, {"sq"});
  model.Node("Squeeze", {"us"}, {"sq_all"});  // every axis of 1: depends on the shape
  SetAttr(model.Node("Concat", {"u", "x"}, {"cat"}), "axis", int64_t{1});
  model.Node("Shape", {"x"}, {"shape_x"});
  model.Node("Reshape", {"u", "shape_x"}, {"like_x"});
  SetAttr(model.Node("ReduceMean", {"x"}, {"kept"}), "axes", Ints{1});
  auto& dropped = model.Node("ReduceMean", {"x"}, {"dropped"});
  SetAttr(dropped, "axes", Ints{1});
  SetAttr(dropped, "keepdims", int64_t{0});
  model.Node("MatMul", {"x", "x"}, {"mm"});
  model.Node("MatMul", {"u", "x"}, {"mm_u"});
  for (const char* out : {"a", "m", "au", "t", "sq", "sq_all", "cat", "like_x", "kept", "dropped", "mm", "mm_u"}) {
    model.Output(out, DataType::kFloat, {}, false);
  }
  EXPECT_EQ(Rank("x"), 4);
  EXPECT_EQ(Rank("c"), 3);
  EXPECT_EQ(Rank("u"), -1);
  EXPECT_EQ(Rank("r"), 4);
  EXPECT_EQ(Rank("a"), 4);
  EXPECT_EQ(Rank("m"), 3);
  EXPECT_EQ(Rank("au"), -1);
  EXPECT_EQ(Rank("t"), 4);
  EXPECT_EQ(Rank("rs"), 3);
  EXPECT_EQ(Rank("us"), 4);
  EXPECT_EQ(Rank("sq"), 3);
  EXPECT_EQ(Rank("sq_all"), -1);
  EXPECT_EQ(Rank("cat"), 4);  // Concat's inputs share their rank: x proves it
  EXPECT_EQ(Rank("shape_x"), 1);
  EXPECT_EQ(Rank("like_x"), 4);
  EXPECT_EQ(Rank("kept"), 4);
  EXPECT_EQ(Rank("dropped"), -1);
  EXPECT_EQ(Rank("mm"), 4);
  EXPECT_EQ(Rank("mm_u"), -1);  // a 1-D u would drop an axis
  EXPECT_EQ(Rank("nothing"), -1);
}

// The quantized ops a QDQ model becomes: QLinearAdd of A and B (inputs 0 and 3, not the scales),
// QLinearConcat of its data, per-tensor Q and DQ, the channels-last convolution.
TEST_F(ValueRankTest, QuantizedOps) {
  auto* ms = model.proto().add_opset_import();
  ms->set_domain(kMsDomain);
  ms->set_version(1);
  model.Input("x", DataType::kUint8, {1, 8, 5, 5});
  model.Input("b3", DataType::kUint8, {8, 5, 5});
  model.Input("bu", DataType::kUint8, {}, /*rank_known=*/false);
  model.Initializer("s", Tensor::Scalar<float>(0.1f));
  model.Initializer("z", Tensor::Scalar<uint8_t>(128));
  model.Node("QLinearAdd", {"x", "s", "z", "b3", "s", "z", "s", "z"}, {"add"}).set_domain(kMsDomain);
  model.Node("QLinearAdd", {"x", "s", "z", "bu", "s", "z", "s", "z"}, {"add_u"}).set_domain(kMsDomain);
  auto& cat = model.Node("QLinearConcat", {"s", "z", "bu", "s", "z", "x", "s", "z"}, {"cat"});
  cat.set_domain(kMsDomain);
  SetAttr(cat, "axis", int64_t{1});
  model.Node("DequantizeLinear", {"add", "s", "z"}, {"f"});
  model.Node("QuantizeLinear", {"f", "s", "z"}, {"q"});
  for (const char* out : {"add_u", "cat", "q"}) model.Output(out, DataType::kUint8, {}, false);
  EXPECT_EQ(Rank("add"), 4);
  EXPECT_EQ(Rank("add_u"), -1);
  EXPECT_EQ(Rank("cat"), 4);
  EXPECT_EQ(Rank("q"), 4);
}

// A chain of 100 000 Relus: one query walks 16 levels (no deep recursion, no cost of the
// chain's length), so the end of the chain is unknown to it; a ValueRanks asked along the chain
// keeps each answer and proves every value. A value cut short in one query is walked again by a
// later one that starts nearer the proof; what the caller assumes stands.
TEST_F(ValueRankTest, AHostileChainCostsTheBound) {
  model.Input("x", DataType::kFloat, {1, 2, 2, 2});
  std::string v = "x";
  constexpr int kChain = 100000;
  for (int i = 0; i < kChain; ++i) {
    const std::string out = "r" + std::to_string(i);
    model.Node("Relu", {v}, {out});
    v = out;
  }
  model.Output(v, DataType::kFloat, {1, 2, 2, 2});
  EXPECT_EQ(Rank(v), -1);
  EXPECT_EQ(Rank("r10"), 4);
  EXPECT_EQ(Rank("r16"), -1);  // 17 producers up to x: one past the bound

  ValueRanks ranks(graph(), 4);
  EXPECT_EQ(ranks.Of("r9"), -1);
  EXPECT_EQ(ranks.Of("r2"), 4);
  EXPECT_EQ(ranks.Of("r5"), 4);
  EXPECT_EQ(ranks.Of("r9"), 4);  // r5 is proven now
  for (int i = 10; i < kChain; i += 3) ASSERT_EQ(ranks.Of("r" + std::to_string(i)), 4) << i;
  EXPECT_EQ(ranks.Of(v), 4);

  ValueRanks assumed(graph(), 4);
  assumed.Assume("r500", 3);
  EXPECT_EQ(assumed.Of("r502"), 3);
}

}  // namespace
}  // namespace onnxflow::graph
