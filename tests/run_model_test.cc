// run_model's contract: exit 0 done, 1 outputs differ from --check, 2 refused with one clear line.
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>

#include <gtest/gtest.h>

#include "include/onnxflow/io.h"
#include "tests/tool_run.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using tools::ModelBuilder;

using Outcome = testing::ToolOutcome;

Outcome RunTool(const std::string& args) { return testing::RunCommand("tools/run_model " + args); }

std::string Dir() { return testing::TestTmpDir(); }

std::string Write(const std::string& name, const std::string& bytes) { return testing::WriteTestFile(name, bytes); }

TEST(RunModel, DemoRuns) {
  Outcome o = RunTool("--demo");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  EXPECT_NE(o.output.find("probabilities: float32 [1,10]"), std::string::npos) << o.output;
}

TEST(RunModel, RunsPrintsTimingAsTheLastLine) {
  Outcome o = RunTool(testing::WriteAddOneModel() + " --fill --runs 3");
  EXPECT_EQ(o.exit_code, 0) << o.output;
  const size_t last = o.output.rfind("runs=3 p50_ms=");
  ASSERT_NE(last, std::string::npos) << o.output;
  EXPECT_EQ(o.output.find('\n', last), o.output.size() - 1);
}

TEST(RunModel, CheckMatchesAndMismatches) {
  const std::string model = testing::WriteAddOneModel();
  const std::string dir = Dir() + "/check";
  mkdir(dir.c_str(), 0755);
  ASSERT_TRUE(WriteValueFile(dir + "/input_0.pb", Tensor::FromVector<float>({3}, {1, 2, 3}), "x").ok());
  ASSERT_TRUE(WriteValueFile(dir + "/output_0.pb", Tensor::FromVector<float>({3}, {2, 3, 4}), "y").ok());
  Outcome same = RunTool(model + " --inputs " + dir + " --check " + dir);
  EXPECT_EQ(same.exit_code, 0) << same.output;
  ASSERT_TRUE(WriteValueFile(dir + "/output_0.pb", Tensor::FromVector<float>({3}, {2, 3, 5}), "y").ok());
  Outcome differs = RunTool(model + " --inputs " + dir + " --check " + dir);
  EXPECT_EQ(differs.exit_code, 1) << differs.output;
  EXPECT_NE(differs.output.find("DIFFERS"), std::string::npos);

  // --output-dir writes what --check reads back.
  const std::string out = Dir() + "/out";
  mkdir(out.c_str(), 0755);
  EXPECT_EQ(RunTool(model + " --inputs " + dir + " --output-dir " + out).exit_code, 0);
  auto written = ReadValueFile(out + "/output_0.pb");
  ASSERT_TRUE(written.ok());
  EXPECT_EQ(written->tensor().data<float>()[2], 4.0f);
}

// A model ONNX Runtime saved keeps graph inputs whose initializers it folded away; the test set
// written for the original model has no file for them.
TEST(RunModel, InputsDirSkipsInputsNothingReads) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {3});
  m.Input("folded_away", DataType::kFloat, {3});
  m.Node("Relu", {"x"}, {"y"});
  m.Output("y", DataType::kFloat, {3});
  const std::string model = Write("dangling_input.onnx", m.Serialize());
  const std::string dir = Dir() + "/dangling";
  mkdir(dir.c_str(), 0755);
  ASSERT_TRUE(WriteValueFile(dir + "/input_0.pb", Tensor::FromVector<float>({3}, {-1, 2, 3}), "x").ok());
  ASSERT_TRUE(WriteValueFile(dir + "/output_0.pb", Tensor::FromVector<float>({3}, {0, 2, 3}), "y").ok());
  Outcome o = RunTool(model + " --inputs " + dir + " --check " + dir);
  EXPECT_EQ(o.exit_code, 0) << o.output;
}

TEST(RunModel, RefusalsExitTwoWithAReason) {
  ModelBuilder unsupported(17);
  unsupported.Input("x", DataType::kFloat, {3});
  unsupported.Node("NoSuchOp", {"x"}, {"y"}, "mystery");
  unsupported.Output("y", DataType::kFloat, {3});
  Outcome a = RunTool(Write("unsupported.onnx", unsupported.Serialize()) + " --fill");
  EXPECT_EQ(a.exit_code, 2);
  EXPECT_NE(a.output.find("node 'mystery' (NoSuchOp)"), std::string::npos) << a.output;

  ModelBuilder cycle(17);
  cycle.Input("x", DataType::kFloat, {3});
  cycle.Node("Add", {"x", "b"}, {"a"}, "cyc_a");
  cycle.Node("Relu", {"a"}, {"b"}, "cyc_b");
  cycle.Output("a", DataType::kFloat, {3});
  Outcome b = RunTool(Write("cycle.onnx", cycle.Serialize()) + " --fill");
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_NE(b.output.find("cycle"), std::string::npos) << b.output;

  Outcome c = RunTool(testing::WriteAddOneModel());  // no input given
  EXPECT_EQ(c.exit_code, 2);
  EXPECT_NE(c.output.find("input 'x' was not given"), std::string::npos) << c.output;

  const std::string bad_input = Dir() + "/int_input.pb";
  ASSERT_TRUE(WriteValueFile(bad_input, Tensor::FromVector<int64_t>({3}, {1, 2, 3}), "x").ok());
  Outcome d = RunTool(testing::WriteAddOneModel() + " --input x=" + bad_input);
  EXPECT_EQ(d.exit_code, 2);
  EXPECT_NE(d.output.find("input 'x' has type int64, the model expects float32"), std::string::npos) << d.output;

  // An input file that is no TensorProto (read as it is parsed, ReadValueFile): refused, the
  // file named.
  const std::string garbage_input = Write("garbage_input.pb", "\x0a\xff\xff garbage");
  Outcome e = RunTool(testing::WriteAddOneModel() + " --input x=" + garbage_input);
  EXPECT_EQ(e.exit_code, 2);
  EXPECT_NE(e.output.find("'" + garbage_input + "' is not a serialized TensorProto"), std::string::npos) << e.output;

  EXPECT_EQ(RunTool(Write("garbage.onnx", "\x08\xff\xff garbage")).exit_code, 2);
  EXPECT_EQ(RunTool("--no-such-flag").exit_code, 2);
  EXPECT_EQ(RunTool(testing::WriteAddOneModel() + " --mode sideways --fill").exit_code, 2);
  EXPECT_EQ(RunTool("/nonexistent.onnx").exit_code, 2);
}

// A Loop with neither trip count nor condition: only a limit or a deadline ends it.
std::string EndlessLoopModel() {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {4});
  auto& loop = m.Node("Loop", {"", "", "x"}, {"y"}, "forever");
  tools::GraphBuilder body = tools::SetGraphAttr(loop, "body");
  body.Input("i", DataType::kInt64, {});
  body.Input("c", DataType::kBool, {});
  body.Input("v", DataType::kFloat, {4});
  body.Node("Identity", {"c"}, {"c_out"});
  body.Node("Neg", {"v"}, {"v_out"});
  body.Output("c_out", DataType::kBool, {});
  body.Output("v_out", DataType::kFloat, {4});
  m.Output("y", DataType::kFloat, {4});
  return Write("endless.onnx", m.Serialize());
}

TEST(RunModel, MaxLoopIterationsEndsAnEndlessLoop) {
  Outcome o = RunTool(EndlessLoopModel() + " --fill --max-loop-iterations 50");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("node 'forever' (Loop)"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("the loop passed the limit of 50 iterations"), std::string::npos) << o.output;
  Outcome bad = RunTool(EndlessLoopModel() + " --fill --max-loop-iterations -3");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--max-loop-iterations must be positive"), std::string::npos) << bad.output;
}

TEST(RunModel, TimeoutEndsTheRun) {
  // Far more iterations than 0.2 s allows, so the deadline is what ends the run.
  Outcome o = RunTool(EndlessLoopModel() + " --fill --max-loop-iterations 1000000000000 --timeout 0.2");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_NE(o.output.find("run failed: DeadlineExceeded"), std::string::npos) << o.output;
  EXPECT_NE(o.output.find("node 'forever' (Loop)"), std::string::npos) << o.output;
  Outcome bad = RunTool(testing::WriteAddOneModel() + " --fill --timeout -1");
  EXPECT_EQ(bad.exit_code, 2) << bad.output;
  EXPECT_NE(bad.output.find("--timeout must be a number of seconds"), std::string::npos) << bad.output;
}

}  // namespace
}  // namespace onnxflow
