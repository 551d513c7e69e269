// Scheduler and control-flow overhead (run by hand, not a test):
//   loop_benchmark [--iterations N] [--nodes N] [--runs R] [--threads T] [--write DIR]
// Model "loop_add": Loop(M = N) whose body adds 1 to a 64-float tensor.
// Model "loop_if_add": the same Loop whose body holds an If choosing between two Adds.
// Model "chain_add": N Adds of 64 floats one after another (what a node costs when nothing can
// run beside it). Model "wide_add": the same N Adds as 8 independent chains joined by one Sum
// (what the flow graph costs when it has branches to run side by side).
// Prints the median time per iteration or per node; --write saves the models so ONNX Runtime can
// run the same files (../shared/tools/ort_bench.js DIR/loop_add.onnx 1 20).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>

#include <CLI/CLI.hpp>

#include "include/onnxflow/session.h"
#include "tools/cli_common.h"
#include "tools/model_builder.h"

namespace onnxflow::tools {
namespace {

constexpr int64_t kWidth = 64;

void AddBranch(onnx::NodeProto& node, const std::string& attr, float addend) {
  GraphBuilder g = SetGraphAttr(node, attr);
  g.Initializer(attr + "_c", Tensor::FromVector<float>({1}, {addend}));
  g.Node("Add", {"v", attr + "_c"}, {attr + "_out"});
  g.Output(attr + "_out", DataType::kFloat, {kWidth});
}

std::string LoopModel(int64_t iterations, bool with_if) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {kWidth});
  m.Initializer("M", Tensor::Scalar<int64_t>(iterations));
  m.Initializer("cond", Tensor::Scalar<bool>(true));
  auto& loop = m.Node("Loop", {"M", "cond", "x"}, {"y"}, "loop");
  GraphBuilder body = SetGraphAttr(loop, "body");
  body.Input("i", DataType::kInt64, {});
  body.Input("cond_in", DataType::kBool, {});
  body.Input("v", DataType::kFloat, {kWidth});
  body.Node("Identity", {"cond_in"}, {"cond_out"});
  if (with_if) {
    auto& branch = body.Node("If", {"cond_in"}, {"v_out"}, "choose");
    AddBranch(branch, "then_branch", 1.0f);
    AddBranch(branch, "else_branch", 2.0f);
  } else {
    body.Initializer("one", Tensor::FromVector<float>({1}, {1.0f}));
    body.Node("Add", {"v", "one"}, {"v_out"});
  }
  body.Output("cond_out", DataType::kBool, {});
  body.Output("v_out", DataType::kFloat, {kWidth});
  m.Output("y", DataType::kFloat, {kWidth});
  return m.Serialize();
}

// `nodes` Adds in `chains` independent chains; several chains end in one Sum.
std::string ChainModel(int64_t nodes, int64_t chains) {
  ModelBuilder m(17);
  m.Input("x", DataType::kFloat, {kWidth});
  std::vector<std::string> ends;
  for (int64_t c = 0; c < chains; ++c) {
    // A different constant per chain: identical chains would be merged by common-subexpression
    // elimination (ONNX Runtime does), and the model would measure something else.
    const std::string step = "step" + std::to_string(c);
    m.Initializer(step, Tensor::FromVector<float>({1}, {1.0f + static_cast<float>(c)}));
    std::string v = "x";
    for (int64_t i = 0; i < nodes / chains; ++i) {
      const std::string out = "c" + std::to_string(c) + "_" + std::to_string(i);
      m.Node("Add", {v, step}, {out});
      v = out;
    }
    ends.push_back(v);
  }
  if (chains > 1) {
    m.Node("Sum", ends, {"y"});
  } else {
    m.Node("Identity", ends, {"y"});
  }
  m.Output("y", DataType::kFloat, {kWidth});
  return m.Serialize();
}

int Measure(const std::string& name, const std::string& bytes, int64_t units, bool optimize, int runs, int threads) {
  SessionOptions options;
  options.threads = threads;
  options.optimize = optimize;
  auto session = Session::LoadFromBytes(bytes, options);
  if (!session.ok()) {
    std::fprintf(stderr, "%s: %s\n", name.c_str(), session.status().ToString().c_str());
    return 2;
  }
  std::vector<NamedValue> inputs = {{"x", Tensor(DataType::kFloat, {kWidth})}};
  std::vector<double> ms;
  for (int r = 0; r <= runs; ++r) {
    const auto start = std::chrono::steady_clock::now();
    auto out = session->Run(inputs);
    const double t = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!out.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), out.status().ToString().c_str());
      return 2;
    }
    if (r > 0) ms.push_back(t);  // the first run is the warm-up
  }
  std::sort(ms.begin(), ms.end());
  const double p50 = ms[ms.size() / 2];
  std::printf("%-16s units=%lld runs=%d p50_ms=%.3f per_unit_us=%.3f\n", name.c_str(),
              static_cast<long long>(units), runs, p50, p50 * 1000.0 / static_cast<double>(units));
  return 0;
}

}  // namespace
}  // namespace onnxflow::tools

int main(int argc, char** argv) {
  int64_t iterations = 10000, nodes = 1000;
  int runs = 20, threads = 1;
  std::string write_dir;
  CLI::App app{"Time per Loop iteration (with and without an If in the body) and per node of a graph of tiny Adds."};
  app.footer(
      "Exit codes: 0 done; 2 refused (bad usage, or a model that failed to load or run; stderr says which).\n"
      "Example:\n"
      "  loop_benchmark --iterations 1000 --runs 5 --write /tmp/loops");
  app.add_option("--iterations", iterations, "Loop trip count")->capture_default_str();
  app.add_option("--nodes", nodes, "Adds in the chain models (a multiple of 8)")->capture_default_str();
  app.add_option("--runs", runs, "timed runs after one warm-up")->capture_default_str();
  app.add_option("--threads", threads, "cores")->capture_default_str();
  app.add_option("--write", write_dir, "also write the models as DIR/<name>.onnx")
      ->transform(onnxflow::tools::UserPathArg());
  onnxflow::tools::AddVersionFlag(app, "loop_benchmark");
  CLI11_PARSE(app, argc, argv);
  if (iterations < 1 || runs < 1 || nodes < 8) {
    std::fprintf(stderr, "loop_benchmark: --iterations and --runs must be at least 1, --nodes at least 8\n");
    return 2;
  }
  using namespace onnxflow::tools;
  // The chains of Adds measure what a node costs the scheduler, so they run as written: loaded with
  // the passes, a chain becomes one ElementwiseChain node (chain_add_fused shows that).
  const struct {
    const char* name;
    std::string bytes;
    int64_t units;
    bool optimize;
  } models[] = {{"loop_add", LoopModel(iterations, false), iterations, true},
                {"loop_if_add", LoopModel(iterations, true), iterations, true},
                {"chain_add", ChainModel(nodes, 1), nodes, false},
                {"wide_add", ChainModel(nodes / 8 * 8, 8), nodes / 8 * 8, false},
                {"chain_add_fused", ChainModel(nodes, 1), nodes, true}};
  int status = 0;
  for (const auto& model : models) {
    if (!write_dir.empty()) std::ofstream(write_dir + "/" + model.name + ".onnx", std::ios::binary) << model.bytes;
    status |= Measure(model.name, model.bytes, model.units, model.optimize, runs, threads);
  }
  return status;
}
