// Load time against model size (issue 23: it must grow linearly). Run by hand, not a test:
//   load_benchmark [--nodes 1000,10000,100000] [--shape chain|wide|nested|all] [--no-optimize]
// Prints, per shape and node count, the load time, the first run's time and the load time per
// node (which stays flat when the load is linear).
#include <chrono>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "include/onnxflow/session.h"
#include "tools/large_models.h"

namespace onnxflow::tools {
namespace {

using Clock = std::chrono::steady_clock;

double Seconds(Clock::time_point since) { return std::chrono::duration<double>(Clock::now() - since).count(); }

int Main(int argc, char** argv) {
  std::vector<int64_t> sizes = {1000, 10000, 100000};
  std::string shape = "all";
  bool no_optimize = false;
  CLI::App app{"Load time of generated models against their node count."};
  app.add_option("--nodes", sizes, "comma-separated node counts")->delimiter(',');
  app.add_option("--shape", shape, "chain | wide | nested | all");
  app.add_flag("--no-optimize", no_optimize, "load without constant folding or fusion");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  SessionOptions options;
  options.optimize = !no_optimize;
  std::printf("%-7s %9s %10s %10s %12s\n", "shape", "nodes", "load_s", "run_ms", "load_us/node");
  for (const std::string s : {"chain", "wide", "nested"}) {
    if (shape != "all" && shape != s) continue;
    for (int64_t n : sizes) {
      const std::string bytes = s == "chain" ? ChainOfElementwise(n)
                                : s == "wide" ? WideBranches(n)
                                              : NestedSubgraphs(60, n / 60);
      auto start = Clock::now();
      auto session = Session::LoadFromBytes(bytes, options);
      const double load = Seconds(start);
      if (!session.ok()) {
        std::fprintf(stderr, "%s %lld: %s\n", s.c_str(), static_cast<long long>(n), session.status().ToString().c_str());
        return 1;
      }
      std::vector<NamedValue> inputs = {{"x", Tensor::FromVector<float>({4}, {1, -2, 3, -4})}};
      if (s == "nested") inputs.push_back({"flag", Tensor::Scalar<bool>(true)});
      start = Clock::now();
      auto out = session->Run(inputs);
      const double run = Seconds(start);
      if (!out.ok()) {
        std::fprintf(stderr, "%s %lld: %s\n", s.c_str(), static_cast<long long>(n), out.status().ToString().c_str());
        return 1;
      }
      std::printf("%-7s %9lld %10.3f %10.2f %12.2f\n", s.c_str(), static_cast<long long>(n), load, run * 1e3,
                  load * 1e6 / static_cast<double>(n));
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace onnxflow::tools

int main(int argc, char** argv) { return onnxflow::tools::Main(argc, argv); }
