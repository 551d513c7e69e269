// benchmark's contract (issue 25): it describes what it measured (configuration, load and first-run
// time, peak RSS, spread beside percentiles) in the table, the JSON and the SVG; refuses bad --runs
// and unwritable outputs before measuring; traces several runs with thread names and shapes.

#include <cstdio>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "include/onnxflow/io.h"
#include "tests/tool_run.h"
#include "include/onnxflow/version.h"
#include "tools/model_builder.h"

namespace onnxflow {
namespace {

using Outcome = testing::ToolOutcome;

Outcome RunTool(const std::string& args) { return testing::RunCommand("tools/benchmark " + args); }

std::string Dir() { return testing::TestTmpDir(); }

std::string ReadFile(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string Model() {
  tools::ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {-1, 8});
  // Two heads rather than a chain: the load passes would fuse Relu -> Sigmoid into one node.
  m.Node("Relu", {"x"}, {"r"}, "relu");
  m.Node("Sigmoid", {"x"}, {"y"}, "sig");
  m.Output("r", DataType::kFloat, {-1, 8});
  m.Output("y", DataType::kFloat, {-1, 8});
  const std::string path = Dir() + "/bench.onnx";
  std::ofstream(path, std::ios::binary) << m.Serialize();
  return path;
}

bool Has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

TEST(BenchmarkTool, RefusesRunsBelowOne) {
  for (const char* runs : {"0", "-3"}) {
    Outcome o = RunTool(Model() + " --runs " + runs);
    EXPECT_EQ(o.exit_code, 2) << o.output;
    EXPECT_TRUE(Has(o.output, std::string("benchmark: --runs must be at least 1, got ") + runs)) << o.output;
  }
}

TEST(BenchmarkTool, UnwritableOutputIsRefusedBeforeMeasuring) {
  Outcome o = RunTool(Model() + " --runs 5 --svg /nonexistent-dir/chart.svg");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Has(o.output, "benchmark: cannot write '/nonexistent-dir/chart.svg' (checked before measuring)")) << o.output;
  EXPECT_FALSE(Has(o.output, "concurrency")) << o.output;  // no measurement ran
}

TEST(BenchmarkTool, UnknownShapeNameIsRefused) {
  Outcome o = RunTool(Model() + " --runs 5 --shape nope=1x8");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Has(o.output, "--shape nope=1x8: the model has no input named 'nope'")) << o.output;
}

// Real inputs: DIR/input_0.pb of a shape no flag gave; the configuration echoes where they came
// from and their shape. A folder without them is refused before measuring.
TEST(BenchmarkTool, RealInputsFromADirectory) {
  const std::string dir = Dir() + "/inputs";
  ASSERT_EQ(system(("mkdir -p " + dir).c_str()), 0);
  Tensor x(DataType::kFloat, {5, 8});
  ASSERT_TRUE(WriteValueFile(dir + "/input_0.pb", x, "x").ok());
  const std::string json = Dir() + "/real.json";
  Outcome o = RunTool(Model() + " --runs 3 --concurrency 1 --inputs " + dir + " --json " + json);
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Has(o.output, "inputs " + dir + "\nshapes: x=5x8\n")) << o.output;
  auto j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["config"]["inputs"], dir);
  EXPECT_EQ(j["config"]["shapes"]["x"], "5x8");
  o = RunTool(Model() + " --runs 3 --inputs " + Dir() + "/no-such-dir");
  EXPECT_EQ(o.exit_code, 2) << o.output;
  EXPECT_TRUE(Has(o.output, "benchmark: InvalidArgument: input 'x': cannot open '" + Dir() + "/no-such-dir/input_0.pb'"))
      << o.output;
}

TEST(BenchmarkTool, DescribesItselfInTableJsonSvgAndTrace) {
  const std::string json = Dir() + "/b.json", svg = Dir() + "/b.svg", trace = Dir() + "/b.trace.json";
  Outcome o = RunTool(Model() + " --runs 20 --concurrency 1,2 --threads 2 --shape x=3x8 --json " + json + " --svg " +
                      svg + " --trace " + trace + " --trace-runs 4");
  ASSERT_EQ(o.exit_code, 0) << o.output;
  EXPECT_TRUE(Has(o.output, "onnxflow " ONNXFLOW_VERSION_STRING ", threads 2, mode dataflow, inputs fill\nshapes: x=3x8\ncpu: ")) << o.output;
  EXPECT_TRUE(Has(o.output, "mean_ms")) << o.output;
  EXPECT_TRUE(Has(o.output, "stddev_ms")) << o.output;
  EXPECT_TRUE(Has(o.output, "* fewer than 1000 runs: p99.9 is the slowest run (the maximum)")) << o.output;
  EXPECT_TRUE(Has(o.output, "peak_rss_mb=")) << o.output;

  auto j = nlohmann::json::parse(ReadFile(json));
  EXPECT_EQ(j["config"]["threads"], 2);
  EXPECT_EQ(j["config"]["mode"], "dataflow");
  EXPECT_EQ(j["config"]["shapes"]["x"], "3x8");
  EXPECT_EQ(j["config"]["onnxflow_version"], ONNXFLOW_VERSION_STRING);
  EXPECT_FALSE(j["config"]["cpu_model"].get<std::string>().empty());
  EXPECT_GE(j["config"]["cores"].get<int>(), 1);
  EXPECT_GT(j["load_ms"].get<double>(), 0);
  EXPECT_GT(j["first_run_ms"].get<double>(), 0);
  EXPECT_GT(j["peak_rss_mb"].get<double>(), 1);
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& r = j["results"][0];
  EXPECT_EQ(r["runs"], 20);
  EXPECT_TRUE(r["p999_is_max"].get<bool>());
  EXPECT_EQ(r["p999_ms"], r["max_ms"]);
  EXPECT_LE(r["min_ms"].get<double>(), r["mean_ms"].get<double>());
  EXPECT_LE(r["mean_ms"].get<double>(), r["max_ms"].get<double>());
  EXPECT_GE(r["stddev_ms"].get<double>(), 0);

  const std::string chart = ReadFile(svg);
  EXPECT_TRUE(Has(chart, ">p50 latency (ms, right)</text>")) << chart;
  EXPECT_TRUE(Has(chart, ">p99 latency (ms, right)</text>")) << chart;
  EXPECT_TRUE(Has(chart, ">throughput (runs/s, left)</text>")) << chart;
  EXPECT_TRUE(Has(chart, "shapes: x=3x8")) << chart;  // the configuration in the caption
  EXPECT_TRUE(Has(chart, "log scale")) << chart;

  auto t = nlohmann::json::parse(ReadFile(trace));
  int runs = 0, named_workers = 0, with_shape = 0;
  for (const auto& e : t["traceEvents"]) {
    if (e["ph"] == "X" && e["tid"] == 0) ++runs;
    if (e["ph"] == "M" && e["name"] == "thread_name" && Has(e["args"]["name"].get<std::string>(), "worker ")) ++named_workers;
    if (e["ph"] == "X" && e.contains("args") && e["args"].contains("output_shape") &&
        e["args"]["output_shape"] == nlohmann::json::array({3, 8})) {
      ++with_shape;
    }
  }
  EXPECT_EQ(runs, 4);
  EXPECT_GE(named_workers, 1);
  EXPECT_EQ(with_shape, 8);  // two nodes per run, four runs
}

}  // namespace
}  // namespace onnxflow
