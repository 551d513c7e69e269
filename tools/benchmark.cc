// benchmark: closed-loop load generator for one model (issue 6; configuration, spread and real
// inputs from issue 25).
//   benchmark MODEL.onnx [--concurrency 1,2,4,8] [--runs N | --duration 10s] [--threads N]
//                        [--mode dataflow|sequential] [--dim NAME=N] [--shape NAME=AxB] [--inputs DIR]
//                        [--json FILE] [--svg FILE] [--trace FILE [--trace-runs N]]
//                        [--timeout SECONDS]
// For each concurrency level, that many host threads call Run on one shared Session back to back.
// Reports throughput, latency percentiles and CPU time per run; then the process CPU over one idle
// second (worker threads must sleep when there is no work).
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/benchmark_report.h"
#include "tools/cli_common.h"

namespace onnxflow::tools {
namespace {

using Clock = std::chrono::steady_clock;

double ProcessCpuSeconds() {
  rusage u;
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

void Progress(int concurrency, int64_t done, int64_t total, double elapsed, double duration) {
  static const bool terminal = isatty(STDERR_FILENO);
  if (!terminal) return;
  const double fraction = total > 0 ? static_cast<double>(done) / total : std::min(1.0, elapsed / duration);
  const int width = 30, filled = static_cast<int>(fraction * width);
  std::fprintf(stderr, "\rconcurrency %-3d [%s%s] %3d%%", concurrency, std::string(filled, '#').c_str(),
               std::string(width - filled, ' ').c_str(), static_cast<int>(fraction * 100));
  std::fflush(stderr);
}

Result<LevelResult> RunLevel(const Session& session, const std::vector<NamedValue>& inputs, int concurrency,
                             int64_t runs, double duration, double timeout) {
  std::vector<double> latencies;
  std::mutex mutex;
  std::atomic<int64_t> started{0}, finished{0};
  std::atomic<bool> failed{false};
  std::string error;
  const double cpu_before = ProcessCpuSeconds();
  const auto start = Clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(Clock::now() - start).count(); };
  // When the last run ended, in seconds since `start`: the wall time throughput divides by (the
  // progress loop below wakes every 100 ms, which must not count as run time).
  std::atomic<double> last_end{0.0};
  std::vector<std::thread> threads;
  for (int t = 0; t < concurrency; ++t) {
    threads.emplace_back([&] {
      std::vector<double> mine;
      while (!failed) {
        if (runs > 0 ? started.fetch_add(1) >= runs : elapsed() >= duration) break;
        const auto begin = Clock::now();
        auto out = session.Run(inputs, WithTimeout(timeout));
        const auto end = Clock::now();
        mine.push_back(std::chrono::duration<double, std::milli>(end - begin).count());
        const double end_s = std::chrono::duration<double>(end - start).count();
        for (double seen = last_end.load(); end_s > seen && !last_end.compare_exchange_weak(seen, end_s);) {
        }
        if (!out.ok()) {
          std::lock_guard<std::mutex> lock(mutex);
          failed = true;
          error = out.status().ToString();
        }
        ++finished;
      }
      std::lock_guard<std::mutex> lock(mutex);
      latencies.insert(latencies.end(), mine.begin(), mine.end());
    });
  }
  while (finished < (runs > 0 ? runs : INT64_MAX) && !failed && (runs > 0 || elapsed() < duration)) {
    Progress(concurrency, finished, runs, elapsed(), duration);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  for (auto& t : threads) t.join();
  const double wall = last_end.load();
  const double cpu = ProcessCpuSeconds() - cpu_before;
  Progress(concurrency, 1, 1, 1, 1);
  if (isatty(STDERR_FILENO)) std::fprintf(stderr, "\n");
  if (failed) return Internal("a run failed: " + error);
  if (latencies.empty()) return Internal("no run finished");
  return Summarize(concurrency, latencies, wall, cpu);
}

// `runs` profiled runs from `concurrency` host threads at once, as one trace.
Status WriteTrace(const Session& session, const std::vector<NamedValue>& inputs, const std::string& path, int runs,
                  int concurrency, double timeout) {
  std::vector<RunProfile> profiles(runs);
  std::atomic<int> next{0};
  std::mutex mutex;
  Status error;
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, std::min(concurrency, runs)); ++t) {
    threads.emplace_back([&] {
      for (int r; (r = next++) < runs;) {
        RunOptions options = WithTimeout(timeout);
        options.profile = &profiles[r];
        auto out = session.Run(inputs, options);
        if (!out.ok()) {
          std::lock_guard<std::mutex> lock(mutex);
          error = out.status();
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  if (!error.ok()) return error;
  std::ofstream file(path);
  if (!file) return InvalidArgument("cannot write '" + path + "'");
  file << ChromeTrace(profiles);
  return Status::Ok();
}

double IdleCpuPercent() {
  const double before = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  return (ProcessCpuSeconds() - before) * 100.0;
}

Result<double> ParseDuration(const std::string& text) {
  if (text.empty()) return 0.0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  const std::string unit = end;
  if (value <= 0 || !(unit.empty() || unit == "s" || unit == "ms" || unit == "m")) {
    return InvalidArgument("--duration expects a time such as 10s, 500ms or 1m, got '" + text + "'");
  }
  return unit == "ms" ? value / 1000 : unit == "m" ? value * 60 : value;
}

// Opens `path` for writing without truncating it, so a typo in a path is reported before minutes
// of measurement rather than after.
bool Writable(const std::string& path) {
  std::ofstream file(path, std::ios::app);
  return static_cast<bool>(file);
}

int Main(int argc, char** argv) {
  std::string model, mode = "dataflow", duration_text, json_path, svg_path, trace_path, inputs_dir;
  std::vector<int> levels = {1, 2, 4, 8};
  std::vector<std::string> dim_args, shape_args;
  int64_t runs = 0;
  int threads = 0, trace_runs = 5;
  double timeout = 0;
  CLI::App app{"Throughput and latency of one model under concurrent load."};
  app.footer(
      "For each concurrency level, that many host threads call Run on one shared session back to back; then the\n"
      "process CPU over one idle second. Default: 100 runs per level.\n"
      "Exit codes: 0 done; 2 refused (bad usage, a model or input it cannot accept, an output it cannot write,\n"
      "or a failed run; one line on stderr says what).\n"
      "Example:\n"
      "  benchmark model.onnx --concurrency 1,2,4 --runs 200 --shape data=1x3x224x224 --json out.json --svg out.svg");
  AddVersionFlag(app, "benchmark");
  app.add_option("model", model, "MODEL.onnx")->required()->transform(UserPathArg());
  app.add_option("--concurrency", levels, "comma-separated concurrency levels")->delimiter(',')->capture_default_str();
  auto* runs_opt = app.add_option("--runs", runs, "runs per concurrency level (default 100 without --duration)");
  app.add_option("--duration", duration_text, "time per concurrency level (e.g. 10s, 500ms, 1m)")->excludes(runs_opt);
  app.add_option("--threads", threads, "cores the session may use (default 0: all)");
  app.add_option("--mode", mode, "dataflow | sequential")->capture_default_str();
  app.add_option("--dim", dim_args, "NAME=N for a named dynamic dimension (default 1)");
  app.add_option("--shape", shape_args, "NAME=1x3x224x224: the whole shape of an input");
  app.add_option("--inputs", inputs_dir, "DIR with input_<i>.pb: real inputs instead of filled ones")->transform(UserPathArg());
  app.add_option("--json", json_path, "write the configuration and results as JSON")->transform(UserPathArg());
  app.add_option("--svg", svg_path, "draw throughput, p50 and p99 against concurrency")->transform(UserPathArg());
  app.add_option("--trace", trace_path, "write a Chrome/Perfetto trace of --trace-runs runs")->transform(UserPathArg());
  app.add_option("--trace-runs", trace_runs, "runs in the trace, from the highest concurrency's threads")
      ->capture_default_str();
  app.add_option("--timeout", timeout, "SECONDS: a run that takes longer ends with DeadlineExceeded (exit 2)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  auto fail = [](const std::string& m) {
    std::fprintf(stderr, "benchmark: %s\n", m.c_str());
    return 2;
  };
  if (mode != "dataflow" && mode != "sequential") return fail("--mode must be dataflow or sequential");
  if (!(timeout >= 0) || timeout > 1e7) return fail("--timeout must be a number of seconds between 0 and 1e7");
  for (int c : levels) {
    if (c < 1 || c > 1024) return fail("concurrency levels must be between 1 and 1024");
  }
  if (runs_opt->count() > 0 && runs < 1) return fail("--runs must be at least 1, got " + std::to_string(runs));
  if (threads < 0) return fail("--threads must not be negative (0 means all cores)");
  if (trace_runs < 1) return fail("--trace-runs must be at least 1");
  auto duration = ParseDuration(duration_text);
  if (!duration.ok()) return fail(duration.status().message());
  if (runs <= 0 && *duration <= 0) runs = 100;
  for (const std::string* path : {&json_path, &svg_path, &trace_path}) {
    if (!path->empty() && !Writable(*path)) return fail("cannot write '" + *path + "' (checked before measuring)");
  }

  SessionOptions options;
  options.threads = threads;
  options.mode = mode == "sequential" ? ExecutionMode::kSequential : ExecutionMode::kDataflow;
  BenchConfig config;
  config.model = model;
  config.threads = threads;
  config.mode = mode;
  config.inputs = inputs_dir.empty() ? "fill" : inputs_dir;
  config.cpu_model = CpuModel();
  config.cores = CoreCount();
  auto load_start = Clock::now();
  auto session = Session::Load(model, options);
  config.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - load_start).count();
  if (!session.ok()) return fail("refused model: " + session.status().ToString());
  auto shapes = ParseInputShapes(*session, dim_args, shape_args);
  if (!shapes.ok()) return fail(shapes.status().message());
  auto inputs = GatherInputs(*session, *shapes, {}, inputs_dir, inputs_dir.empty());
  if (!inputs.ok()) return fail(inputs.status().ToString());
  for (const NamedValue& in : *inputs) {
    config.shapes.emplace_back(in.name, in.value.is_tensor() ? ShapeText(in.value.tensor().shape()) : "sequence");
  }
  for (int w = 0; w < 3; ++w) {  // warm-up: first-run allocations and flow-graph construction
    const auto start = Clock::now();
    auto out = session->Run(*inputs, WithTimeout(timeout));
    if (w == 0) config.first_run_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!out.ok()) return fail("run failed: " + out.status().ToString());
  }

  std::printf("%s\n", ConfigText(config).c_str());
  std::vector<LevelResult> results;
  std::printf("%-11s %12s %9s %9s %9s %9s %9s %9s %9s %10s %12s\n", "concurrency", "throughput/s", "mean_ms", "min_ms",
              "max_ms", "stddev_ms", "p50_ms", "p90_ms", "p99_ms", "p99.9_ms", "cpu_ms/run");
  bool any_max = false;
  for (int c : levels) {
    auto r = RunLevel(*session, *inputs, c, runs, *duration, timeout);
    if (!r.ok()) return fail(r.status().ToString());
    std::printf("%-11d %12.1f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f %9.3f%s %12.3f\n", c, r->throughput, r->mean,
                r->min, r->max, r->stddev, r->p50, r->p90, r->p99, r->p999, r->p999_is_max ? "*" : " ",
                r->cpu_ms_per_run);
    any_max |= r->p999_is_max;
    results.push_back(*r);
  }
  if (any_max) std::printf("* fewer than 1000 runs: p99.9 is the slowest run (the maximum)\n");
  config.peak_rss_mb = PeakRssMb();
  std::printf("peak_rss_mb=%.1f\n", config.peak_rss_mb);
  const double idle = IdleCpuPercent();
  std::printf("idle_cpu_percent=%.2f\n", idle);

  if (!trace_path.empty()) {
    Status s = WriteTrace(*session, *inputs, trace_path, trace_runs, *std::max_element(levels.begin(), levels.end()),
                          timeout);
    if (!s.ok()) return fail(s.ToString());
  }
  if (!json_path.empty()) {
    std::ofstream file(json_path);
    if (!file) return fail("cannot write '" + json_path + "'");
    file << ResultsJson(config, results, idle).dump(2) << "\n";
  }
  if (!svg_path.empty()) {
    std::ofstream file(svg_path);
    if (!file) return fail("cannot write '" + svg_path + "'");
    file << ResultsSvg(config, results);
  }
  return 0;
}

}  // namespace
}  // namespace onnxflow::tools

int main(int argc, char** argv) {
  try {
    return onnxflow::tools::Main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "benchmark: internal error: %s\n", e.what());
    return 2;
  }
}
