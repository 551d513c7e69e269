// The plan's reusable inputs (NodeSlots::reusable): a node may write into a value only when no
// other node can read it alongside or after it, and never into values the run does not own.
#include "scheduler/plan.h"

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "graph/model.h"
#include "ops/register_all.h"
#include "scheduler/mode_choice.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using tools::ModelBuilder;

std::unique_ptr<Plan> BuildPlan(const ModelBuilder& m) {
  SessionOptions options;
  options.optimize = false;  // the nodes as written
  auto model = graph::LoadModelBytes(m.Serialize(), "", options, GlobalKernelRegistry());
  EXPECT_TRUE(model.ok()) << model.status().ToString();
  if (!model.ok()) return nullptr;
  auto plan = Plan::Build(*(*model)->graph, {}, GlobalKernelRegistry(), options, 0);
  EXPECT_TRUE(plan.ok()) << plan.status().ToString();
  return plan.ok() ? std::move(plan).value() : nullptr;
}

// The reusable flag of node `name`'s input `input`.
bool Reusable(const Plan& plan, const std::string& name, int input) {
  for (const PlanNode& node : plan.nodes()) {
    if (node.name != name) continue;
    const auto& flags = node.slots.reusable;
    return input < static_cast<int>(flags.size()) && flags[input] != 0;
  }
  ADD_FAILURE() << "no node " << name;
  return false;
}

TEST(Plan, ALastReaderAfterEveryOtherReaderMayReuse) {
  // a feeds b and, through b -> c, also d: d runs after b, so d may write into a.
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {4});
  m.Node("Relu", {"x"}, {"a"}, "a");
  m.Node("Neg", {"a"}, {"b"}, "b");
  m.Node("Abs", {"b"}, {"c"}, "c");
  m.Node("Add", {"c", "a"}, {"d"}, "d");
  m.Output("d", DataType::kFloat, {4});
  auto plan = BuildPlan(m);
  ASSERT_NE(plan, nullptr);
  EXPECT_FALSE(Reusable(*plan, "a", 0)) << "x is the caller's";
  EXPECT_FALSE(Reusable(*plan, "b", 0)) << "d reads a after b";
  EXPECT_TRUE(Reusable(*plan, "c", 0));
  EXPECT_TRUE(Reusable(*plan, "d", 0));
  EXPECT_TRUE(Reusable(*plan, "d", 1));
}

TEST(Plan, ASubgraphsLastReaderMayReuseItsInputs) {
  // The same graph planned as a subgraph (depth 1): its inputs are what its frame moved in (a
  // decoding loop's cache, a Loop's carried state), so their last reader may write into them; the
  // run still checks that nobody else holds the value (KernelContext::ReusableInput).
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {4});
  m.Input("y", DataType::kFloat, {4});
  m.Node("Relu", {"x"}, {"a"}, "a");
  m.Node("Add", {"y", "a"}, {"b"}, "b");
  m.Node("Neg", {"y"}, {"c"}, "c");
  m.Output("b", DataType::kFloat, {4});
  m.Output("c", DataType::kFloat, {4});
  SessionOptions options;
  options.optimize = false;
  auto model = graph::LoadModelBytes(m.Serialize(), "", options, GlobalKernelRegistry());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  for (int depth : {0, 1}) {
    auto plan = Plan::Build(*(*model)->graph, {}, GlobalKernelRegistry(), options, depth);
    ASSERT_TRUE(plan.ok()) << plan.status().ToString();
    EXPECT_EQ(Reusable(**plan, "a", 0), depth > 0) << "x, at depth " << depth;
    EXPECT_FALSE(Reusable(**plan, "b", 0)) << "c may read y after b, at depth " << depth;
  }
}

TEST(Plan, ReadersOnParallelBranchesDoNotReuse) {
  // b and c both read a and may run at once: neither may write into it.
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {4});
  m.Node("Relu", {"x"}, {"a"}, "a");
  m.Node("Neg", {"a"}, {"b"}, "b");
  m.Node("Abs", {"a"}, {"c"}, "c");
  m.Node("Add", {"b", "c"}, {"d"}, "d");
  m.Node("Mul", {"d", "d"}, {"e"}, "e");
  m.Output("e", DataType::kFloat, {4});
  m.Output("c", DataType::kFloat, {4});
  auto plan = BuildPlan(m);
  ASSERT_NE(plan, nullptr);
  EXPECT_FALSE(Reusable(*plan, "b", 0));
  EXPECT_FALSE(Reusable(*plan, "c", 0));
  EXPECT_TRUE(Reusable(*plan, "d", 0));
  EXPECT_FALSE(Reusable(*plan, "d", 1)) << "c is a graph output";
  EXPECT_FALSE(Reusable(*plan, "e", 0)) << "e reads d twice";
  EXPECT_FALSE(Reusable(*plan, "e", 1));
}

// Weights that a kernel packs at load (OpKernel::ReadsAtRun) leave the value table; a constant
// that is a graph output stays (and one that nothing reads is gone already: RemoveDeadNodes).
TEST(Plan, ReleasesConstantsNoKernelReadsAtRun) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 16, 8, 8});
  m.Initializer("w", Tensor::FromVector<float>({16, 16, 3, 3}, std::vector<float>(16 * 16 * 9, 0.5f)));
  m.Initializer("b", Tensor::FromVector<float>({16}, std::vector<float>(16, 1.0f)));
  m.Initializer("unread", Tensor::FromVector<float>({2}, {1, 2}));
  m.Initializer("k", Tensor::FromVector<float>({2}, {3, 4}));
  m.Node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  m.Output("y", DataType::kFloat, {1, 16, 6, 6});
  m.Output("k", DataType::kFloat, {2});
  SessionOptions options;  // the load-time passes make the Conv a BlockedConv, which packs W and B
  auto model = graph::LoadModelBytes(m.Serialize(), "", options, GlobalKernelRegistry());
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  auto plan = Plan::Build(*(*model)->graph, {}, GlobalKernelRegistry(), options, 0);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  std::set<std::string> released((*plan)->released_constants().begin(), (*plan)->released_constants().end());
  EXPECT_EQ(released, (std::set<std::string>{"b", "w"}));
  ASSERT_EQ((*plan)->constants().size(), 1u);
  EXPECT_EQ((*plan)->slot_name((*plan)->constants()[0].first), "k");
}

// A kernel that copies its constant input at load (ReadsAtRun false), and notes at its creation
// whether the constant `watched` names has been let go already.
std::weak_ptr<void> watched;
std::vector<bool> released_at_creation;

class CopyAtLoad : public OpKernel {
 public:
  explicit CopyAtLoad(const KernelInfo&) { released_at_creation.push_back(watched.expired()); }
  Status Compute(KernelContext&) const override { return Status::Ok(); }
  bool ReadsAtRun(int input) const override { return input != 1; }
};

// Each weight goes as soon as the last node reading it has its kernel, not after the whole plan:
// at the load's peak a weight is not held both as read and as packed. One read at run, through a
// subgraph or as a graph output stays.
TEST(Plan, ReleasesEachConstantAsItsLastReaderTakesIt) {
  KernelRegistry registry;
  ASSERT_TRUE(RegisterAllKernels(registry).ok());
  ASSERT_TRUE(registry.Register("test.plan", "CopyAtLoad", 1, kOpenEnded, Make<CopyAtLoad>()).ok());
  ModelBuilder m(17);
  auto* opset = m.proto().add_opset_import();
  opset->set_domain("test.plan");
  opset->set_version(1);
  m.Input("x", DataType::kFloat, {4});
  m.Initializer("w1", Tensor::FromVector<float>({4}, {1, 2, 3, 4}));
  m.Initializer("w2", Tensor::FromVector<float>({4}, {5, 6, 7, 8}));
  m.Initializer("k", Tensor::FromVector<float>({4}, {9, 9, 9, 9}));
  m.Node("CopyAtLoad", {"x", "w1"}, {"a"}, "first").set_domain("test.plan");
  m.Node("CopyAtLoad", {"a", "w1"}, {"b"}, "second").set_domain("test.plan");
  m.Node("CopyAtLoad", {"b", "w2"}, {"c"}, "third").set_domain("test.plan");
  m.Node("CopyAtLoad", {"c", "x", "k"}, {"d"}, "fourth").set_domain("test.plan");  // k at input 2: read at run
  m.Output("d", DataType::kFloat, {4});
  SessionOptions options;
  options.optimize = false;
  auto model = graph::LoadModelBytes(m.Serialize(), "", options, registry);
  ASSERT_TRUE(model.ok()) << model.status().ToString();
  graph::Graph& g = *(*model)->graph;
  watched = g.constants.at("w1").storage();
  std::weak_ptr<void> w2 = g.constants.at("w2").storage();
  released_at_creation.clear();
  auto plan = Plan::Build(g, {}, registry, options, 0);
  ASSERT_TRUE(plan.ok()) << plan.status().ToString();
  // w1 was still needed by "second", and gone before "third" was made.
  EXPECT_EQ(released_at_creation, (std::vector<bool>{false, false, true, true}));
  EXPECT_TRUE(w2.expired());
  EXPECT_EQ(g.constants.at("k").size(), 4);  // the "fourth" kernel reads it at run
  ASSERT_EQ((*plan)->constants().size(), 1u);
  EXPECT_EQ((*plan)->slot_name((*plan)->constants()[0].first), "k");
}

// The runs decide how a dataflow plan runs (mode_choice.h): a run under kSmallRunNs starts a
// trial, alternated, whose faster mode stays; a long run sends an in-order plan back to the flow
// graph; a trial the flow graph wins settles it.
TEST(ModeChoice, TinyRunsGoInOrderAndLongOnesBack) {
  ModeChoice choice;
  EXPECT_FALSE(choice.Sequential());
  choice.Record(false, 2 * ModeChoice::kSmallRunNs);  // large: stays with the flow graph
  EXPECT_FALSE(choice.Sequential());
  choice.Record(false, 100'000);
  for (int run = 0; run < 2 * ModeChoice::kTrialRuns; ++run) {
    const bool sequential = choice.Sequential();
    EXPECT_EQ(sequential, run % 2 == 0) << run;
    choice.Record(sequential, sequential ? 60'000 : 90'000);
  }
  EXPECT_TRUE(choice.Sequential());
  choice.Record(true, 70'000);
  EXPECT_TRUE(choice.Sequential());
  choice.Record(true, ModeChoice::kLargeRunNs + 1);  // the shapes grew
  EXPECT_FALSE(choice.Sequential());
}

// A run over the small-run bound still starts a trial when its nodes average under kTinyNodeNs;
// the in-order winner goes back only for a run both past kLargeRunNs and four times its time.
TEST(ModeChoice, LongGraphsOfTinyNodesAreTried) {
  ModeChoice choice(900);
  choice.Record(false, 2'500'000);  // 2.8 us a node
  for (int run = 0; run < 2 * ModeChoice::kTrialRuns; ++run) {
    const bool sequential = choice.Sequential();
    EXPECT_EQ(sequential, run % 2 == 0) << run;
    choice.Record(sequential, sequential ? 1'100'000 : 2'500'000);
  }
  EXPECT_TRUE(choice.Sequential());
  choice.Record(true, ModeChoice::kLargeRunNs + 1);  // past the bound, under four times 1.1 ms
  EXPECT_TRUE(choice.Sequential());
  choice.Record(true, 4 * 1'100'000 + 1);  // the shapes grew
  EXPECT_FALSE(choice.Sequential());
  ModeChoice big(900);
  big.Record(false, 900 * ModeChoice::kTinyNodeNs + 1);  // nodes that pay for the flow graph
  EXPECT_FALSE(big.Sequential());
  big.Record(false, 900 * ModeChoice::kTinyNodeNs + 1);
  EXPECT_FALSE(big.Sequential());
}

TEST(ModeChoice, AFasterFlowGraphSettles) {
  ModeChoice choice;
  choice.Record(false, 100'000);
  for (int run = 0; run < 2 * ModeChoice::kTrialRuns; ++run) {
    const bool sequential = choice.Sequential();
    choice.Record(sequential, sequential ? 150'000 : 90'000);
  }
  EXPECT_FALSE(choice.Sequential());
  choice.Record(false, 10'000);  // settled: no new trial
  EXPECT_FALSE(choice.Sequential());
}

}  // namespace
}  // namespace onnxflow
