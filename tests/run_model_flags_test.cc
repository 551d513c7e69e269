// run_model's inspect command and the flags of issue 25: --info [--optimized] [--json], --shape,
// refused --dim/--shape names and numbers, case folders, --rtol/--atol, --json, --profile.
#include <sys/stat.h>

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "include/onnxflow/io.h"
#include "tests/tool_run.h"
#include "tests/test_data.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using tools::ModelBuilder;

using Outcome = testing::ToolOutcome;

Outcome RunTool(const std::string& args, bool with_stderr = true) {
  return testing::RunCommand("tools/run_model " + args, with_stderr);
}

std::string Dir() { return testing::TestTmpDir(); }

std::string Write(const std::string& name, const std::string& bytes) { return testing::WriteTestFile(name, bytes); }

bool Has(const Outcome& o, const std::string& text) { return o.output.find(text) != std::string::npos; }

// x: [N, ?] (N named, the second dim unnamed) -> Relu -> Sigmoid -> y; with metadata.
std::string DynamicModel() {
  ModelBuilder m(17);
  m.proto().set_producer_name("flags_test");
  m.proto().set_producer_version("1.0");
  auto* prop = m.proto().add_metadata_props();
  prop->set_key("license");
  prop->set_value("MIT");
  m.proto().mutable_graph()->set_name("dyn");
  m.Input("x", DataType::kFloat, {-1, -1});
  auto* dims = m.proto().mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  dims->mutable_dim(0)->set_dim_param("N");
  dims->mutable_dim(1)->clear_dim_param();
  m.Node("Relu", {"x"}, {"r"}, "relu");
  m.Node("Sigmoid", {"r"}, {"y"}, "sig");
  m.Output("y", DataType::kFloat, {-1, -1});
  return Write("dynamic.onnx", m.Serialize());
}

TEST(RunModelFlags, InfoDescribesTheModel) {
  Outcome o = RunTool("--info " + DynamicModel());
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Has(o, "producer flags_test 1.0")) << o.output;
  EXPECT_TRUE(Has(o, "graph: dyn, 2 nodes, 0 initializers")) << o.output;
  EXPECT_TRUE(Has(o, "metadata license = MIT")) << o.output;
  EXPECT_TRUE(Has(o, "opset imports: ai.onnx 17\n")) << o.output;
  EXPECT_TRUE(Has(o, "inputs:\n  x: float32 [N,?]\n")) << o.output;
  EXPECT_TRUE(Has(o, "ops (2 nodes):\n  Relu                             1\n  Sigmoid                          1\n")) << o.output;
}

TEST(RunModelFlags, InfoJson) {
  Outcome o = RunTool("--info --json " + DynamicModel(), false);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto j = nlohmann::json::parse(o.output);
  EXPECT_EQ(j["producer_name"], "flags_test");
  EXPECT_EQ(j["opset_imports"]["ai.onnx"], 17);
  EXPECT_EQ(j["inputs"][0]["dims"][0], "N");
  EXPECT_TRUE(j["inputs"][0]["dims"][1].is_null());
  EXPECT_EQ(j["ops"]["Sigmoid"], 1);
  EXPECT_EQ(j["metadata_props"]["license"], "MIT");
}

// The ops inside If branches and Loop bodies, at any depth, are listed apart from the main
// graph's: a voice-activity model's LSTMs and convolutions all sit inside one If.
TEST(RunModelFlags, InfoListsTheOpsOfSubgraphs) {
  ModelBuilder m(17);
  m.Input("flag", DataType::kBool, {});
  m.Input("x", DataType::kFloat, {2});
  auto& node = m.Node("If", {"flag"}, {"y"}, "if");
  tools::GraphBuilder then_branch = tools::SetGraphAttr(node, "then_branch");
  then_branch.Node("Relu", {"x"}, {"t"});
  then_branch.Output("t", DataType::kFloat, {2});
  tools::GraphBuilder else_branch = tools::SetGraphAttr(node, "else_branch");
  auto& inner = else_branch.Node("If", {"flag"}, {"e"}, "inner");
  for (const char* branch : {"then_branch", "else_branch"}) {
    tools::GraphBuilder b = tools::SetGraphAttr(inner, branch);
    b.Node("Sigmoid", {"x"}, {std::string(branch) + "_s"});
    b.Output(std::string(branch) + "_s", DataType::kFloat, {2});
  }
  else_branch.Output("e", DataType::kFloat, {2});
  m.Output("y", DataType::kFloat, {2});
  const std::string model = Write("subgraphs.onnx", m.Serialize());
  Outcome o = RunTool("--info " + model);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Has(o, "ops (1 nodes):\n  If                               1\n"
                     "ops in subgraphs (4 nodes in If, Loop and Scan bodies):\n"
                     "  Sigmoid                          2\n  If                               1\n"
                     "  Relu                             1\n")) << o.output;
  o = RunTool("--info --json " + model, false);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto j = nlohmann::json::parse(o.output);
  EXPECT_EQ(j["subgraph_nodes"], 4);
  EXPECT_EQ(j["subgraph_ops"]["Sigmoid"], 2);
}

// The network of the closing note: the description, and the fused nodes of the blocked
// layout traced to the ONNX nodes they replaced (their values are renamed "r1/blocked").
TEST(RunModelFlags, InfoOfInceptionV1) {
  auto data = testing::TestDataDir();
  ASSERT_TRUE(data.ok()) << data.status().ToString();
  const std::string model = *data + "/models/real_inception_v1/model.onnx";
  Outcome o = RunTool("--info " + model);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Has(o, "  ir_version 3, producer onnx-caffe2, model_version 0\n"
                     "  graph: inception_v1, 144 nodes, 118 initializers\n"
                     "opset imports: ai.onnx 9\n"
                     "inputs:\n"
                     "  data_0: float32 [1,3,224,224]\n"
                     "outputs:\n"
                     "  prob_1: float32 [1,1000]\n"
                     "ops (144 nodes):\n"
                     "  Conv                            57\n"
                     "  Relu                            57\n")) << o.output;
  o = RunTool("--info --optimized " + model);
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Has(o, "  n0 (com.onnxflow.BlockedConv)  <- n0 (Conv) + n1 (Relu)\n")) << o.output;
  EXPECT_TRUE(Has(o, "  n2 (com.onnxflow.BlockedMaxPool)  <- n2 (MaxPool)\n")) << o.output;
  EXPECT_TRUE(Has(o, "  FromBlocked(r2/blocked) (com.onnxflow.FromBlocked)\n  n3 (LRN)\n")) << o.output;
  // Convolutions that append to one Concat in turn: the last one stands for the Concat too, and
  // none of them for the nodes before it.
  EXPECT_TRUE(Has(o, "  n21 (com.onnxflow.BlockedConv)  <- n21 (Conv) + n22 (Relu) + n23 (Concat)\n")) << o.output;
}

TEST(RunModelFlags, InfoOptimizedTracesFusedNodes) {
  // Conv -> Relu: the load passes fuse the activation into the convolution.
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {1, 1, 4, 4});
  m.Initializer("w", Tensor::FromVector<float>({1, 1, 1, 1}, {2}));
  m.Node("Conv", {"x", "w"}, {"c"}, "conv");
  m.Node("Relu", {"c"}, {"y"}, "relu");
  m.Output("y", DataType::kFloat, {1, 1, 4, 4});
  Outcome o = RunTool("--info --optimized " + Write("conv_relu.onnx", m.Serialize()));
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Has(o, "optimized graph (1 nodes after the load passes):")) << o.output;
  EXPECT_TRUE(Has(o, "<- conv (Conv) + relu (Relu)")) << o.output;
}

TEST(RunModelFlags, ShapeSetsAnyDynamicDim) {
  Outcome o = RunTool(DynamicModel() + " --fill --shape x=2x5");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Has(o, "y: float32 [2,5]")) << o.output;
  o = RunTool(DynamicModel() + " --fill --dim N=3");
  EXPECT_TRUE(Has(o, "y: float32 [3,1]")) << o.output;
}

TEST(RunModelFlags, UnknownNamesAndOversizedNumbersAreRefused) {
  Outcome o = RunTool(DynamicModel() + " --fill --dim batch=2");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(Has(o, "run_model: --dim batch=2: no input has a dimension named 'batch' (named dimensions: N)\n"))
      << o.output;
  o = RunTool(DynamicModel() + " --fill --shape z=2x5");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(Has(o, "--shape z=2x5: the model has no input named 'z'")) << o.output;
  o = RunTool(DynamicModel() + " --fill --shape x=2x5x1");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(Has(o, "--shape x=2x5x1: input 'x' has rank 2, not 3")) << o.output;
  o = RunTool(DynamicModel() + " --fill --dim N=99999999999999999999");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(Has(o, "--dim N: 99999999999999999999 is too large (at most 1099511627776)")) << o.output;
  EXPECT_FALSE(Has(o, "internal error")) << o.output;
  o = RunTool(DynamicModel() + " --fill --shape x=2xbig");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(Has(o, "--shape x: 'big' is not a non-negative whole number")) << o.output;
}

void WriteSet(const std::string& dir, std::vector<float> in, std::vector<float> out) {
  mkdir(dir.c_str(), 0755);
  ASSERT_TRUE(WriteValueFile(dir + "/input_0.pb", Tensor::FromVector<float>({3}, in), "x").ok());
  ASSERT_TRUE(WriteValueFile(dir + "/output_0.pb", Tensor::FromVector<float>({3}, out), "y").ok());
}

TEST(RunModelFlags, CaseFolderRunsEverySet) {
  const std::string dir = Dir() + "/case";
  mkdir(dir.c_str(), 0755);
  WriteSet(dir + "/test_data_set_0", {1, 2, 3}, {2, 3, 4});
  WriteSet(dir + "/test_data_set_1", {0, 0, 0}, {1, 1, 1.01f});
  Outcome o = RunTool(testing::WriteAddOneModel() + " --inputs " + dir);
  EXPECT_EQ(o.exit_code, 1) << o.output;
  EXPECT_TRUE(Has(o, "test_data_set_0: match, max abs error 0,")) << o.output;
  EXPECT_TRUE(Has(o, "test_data_set_1: DIFFERS, max abs error 0.01,")) << o.output;
  EXPECT_TRUE(Has(o, "sets=2 matched=1 differ=1\n")) << o.output;
  // A looser tolerance accepts the second set.
  o = RunTool(testing::WriteAddOneModel() + " --inputs " + dir + " --atol 0.02");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Has(o, "sets=2 matched=2 differ=0\n")) << o.output;
  o = RunTool(testing::WriteAddOneModel() + " --inputs " + dir + " --rtol 0.02 --atol 0");
  EXPECT_EQ(o.exit_code, 0) << o.output;
}

// A set whose inputs are refused is reported by name; the other sets still run and are checked,
// and the summary line still comes, with the refused count; the exit code is the refusal's.
TEST(RunModelFlags, CaseFolderReportsARefusedSetAndRunsTheOthers) {
  const std::string dir = Dir() + "/case_refused";
  mkdir(dir.c_str(), 0755);
  WriteSet(dir + "/test_data_set_0", {1, 2, 3}, {2, 3, 4});
  mkdir((dir + "/test_data_set_1").c_str(), 0755);
  ASSERT_TRUE(WriteValueFile(dir + "/test_data_set_1/input_0.pb", Tensor::FromVector<float>({2}, {1, 2}), "x").ok());
  WriteSet(dir + "/test_data_set_2", {0, 0, 0}, {1, 1, 1});
  Outcome o = RunTool(testing::WriteAddOneModel() + " --inputs " + dir);
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Has(o, "test_data_set_0: match")) << o.output;
  EXPECT_TRUE(Has(o, "run_model: test_data_set_1: ")) << o.output;
  EXPECT_TRUE(Has(o, "input 'x' has shape [2]")) << o.output;
  EXPECT_TRUE(Has(o, "test_data_set_2: match")) << o.output;
  EXPECT_TRUE(Has(o, "sets=3 matched=2 differ=0 refused=1\n")) << o.output;
}

TEST(RunModelFlags, JsonFigures) {
  Outcome o = RunTool(testing::WriteAddOneModel() + " --fill --runs 3 --json", false);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  auto j = nlohmann::json::parse(o.output);
  EXPECT_EQ(j["runs"], 3);
  EXPECT_TRUE(j["p50_ms"].is_number());
  EXPECT_TRUE(j["mean_ms"].is_number());
  EXPECT_EQ(j["outputs"][0]["name"], "y");
  EXPECT_EQ(j["outputs"][0]["shape"], nlohmann::json::array({3}));
}

TEST(RunModelFlags, ProfileKeepsTheTimingLineLastAndNeedsRuns) {
  Outcome o = RunTool(testing::WriteAddOneModel() + " --fill --profile");
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_TRUE(Has(o, "run_model: --profile needs --runs N: it reports the N timed runs (e.g. --runs 10 --profile)\n"))
      << o.output;
  o = RunTool(testing::WriteAddOneModel() + " --fill --runs 2 --profile");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  const size_t last = o.output.rfind("runs=2 p50_ms=");
  ASSERT_NE(last, std::string::npos) << o.output;
  EXPECT_EQ(o.output.find('\n', last), o.output.size() - 1) << o.output;
  EXPECT_TRUE(Has(o, "node time per run")) << o.output;
}

TEST(RunModelFlags, HelpShowsDefaultsExitCodesAndAnExample) {
  Outcome o = RunTool("--help");
  EXPECT_EQ(o.exit_code, 0);
  EXPECT_TRUE(Has(o, "Exit codes: 0 done")) << o.output;
  EXPECT_TRUE(Has(o, "run_model model.onnx --fill --shape data=1x3x224x224 --runs 20")) << o.output;
  EXPECT_TRUE(Has(o, "--rtol FLOAT=0.001")) << o.output;  // CLI11 2.3 prints defaults as TYPE=VALUE
}

}  // namespace
}  // namespace onnxflow
