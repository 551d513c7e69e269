// benchmark: closed-loop load generator for one model (issue 6).
//   benchmark MODEL.onnx [--concurrency 1,2,4,8] [--runs N | --duration 10s] [--threads N]
//                        [--mode dataflow|sequential] [--dim NAME=N] [--json FILE] [--svg FILE]
//                        [--trace FILE] [--timeout SECONDS]
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

Result<std::vector<NamedValue>> FillInputs(const Session& session, const std::map<std::string, int64_t>& dims) {
  std::vector<NamedValue> inputs;
  for (const ValueInfo& info : session.inputs()) {
    if (info.kind != Value::Kind::kTensor) return InvalidArgument("input '" + info.name + "' is not a tensor");
    Shape shape;
    for (size_t d = 0; d < info.shape.size(); ++d) {
      auto it = dims.find(info.dim_names[d]);
      shape.push_back(info.shape[d] >= 0 ? info.shape[d] : it != dims.end() ? it->second : 1);
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor t, FillTensor(info.dtype, shape));
    inputs.push_back({info.name, std::move(t)});
  }
  return inputs;
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

// Each run's own deadline: `timeout` seconds from its start (none when 0).
RunOptions WithTimeout(double timeout) {
  RunOptions options;
  if (timeout > 0) {
    options.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout));
  }
  return options;
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

Status WriteTrace(const Session& session, const std::vector<NamedValue>& inputs, const std::string& path,
                  double timeout) {
  RunProfile profile;
  RunOptions options = WithTimeout(timeout);
  options.profile = &profile;
  auto out = session.Run(inputs, options);
  if (!out.ok()) return out.status();
  std::ofstream file(path);
  if (!file) return InvalidArgument("cannot write '" + path + "'");
  file << ChromeTrace(profile);
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

int Main(int argc, char** argv) {
  std::string model, mode = "dataflow", duration_text, json_path, svg_path, trace_path;
  std::vector<int> levels = {1, 2, 4, 8};
  std::vector<std::string> dim_args;
  int64_t runs = 0;
  int threads = 0;
  double timeout = 0;
  CLI::App app{"Throughput and latency of one model under concurrent load."};
  AddVersionFlag(app, "benchmark");
  app.add_option("model", model, "MODEL.onnx")->required()->transform(UserPathArg());
  app.add_option("--concurrency", levels, "comma-separated concurrency levels")->delimiter(',');
  auto* runs_opt = app.add_option("--runs", runs, "runs per concurrency level");
  app.add_option("--duration", duration_text, "time per concurrency level (e.g. 10s)")->excludes(runs_opt);
  app.add_option("--threads", threads, "cores the session may use (default: all)");
  app.add_option("--mode", mode, "dataflow | sequential");
  app.add_option("--dim", dim_args, "NAME=N for a dynamic dimension (default 1)");
  app.add_option("--json", json_path, "write the results as JSON")->transform(UserPathArg());
  app.add_option("--svg", svg_path, "draw throughput and p99 against concurrency")->transform(UserPathArg());
  app.add_option("--trace", trace_path, "write a Chrome/Perfetto trace of one run")->transform(UserPathArg());
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
  auto duration = ParseDuration(duration_text);
  if (!duration.ok()) return fail(duration.status().message());
  if (runs <= 0 && *duration <= 0) runs = 100;
  std::map<std::string, int64_t> dims;
  for (const auto& d : dim_args) {
    const size_t eq = d.find('=');
    if (eq == std::string::npos || d.find_first_not_of("0123456789", eq + 1) != std::string::npos || eq + 1 == d.size()) {
      return fail("--dim expects NAME=N, got '" + d + "'");
    }
    dims[d.substr(0, eq)] = std::stoll(d.substr(eq + 1));
  }

  SessionOptions options;
  options.threads = threads;
  options.mode = mode == "sequential" ? ExecutionMode::kSequential : ExecutionMode::kDataflow;
  auto session = Session::Load(model, options);
  if (!session.ok()) return fail("refused model: " + session.status().ToString());
  auto inputs = FillInputs(*session, dims);
  if (!inputs.ok()) return fail(inputs.status().ToString());
  for (int w = 0; w < 3; ++w) {  // warm-up: first-run allocations and flow-graph construction
    auto out = session->Run(*inputs, WithTimeout(timeout));
    if (!out.ok()) return fail("run failed: " + out.status().ToString());
  }

  std::vector<LevelResult> results;
  std::printf("%-11s %12s %9s %9s %9s %9s %12s\n", "concurrency", "throughput/s", "p50_ms", "p90_ms", "p99_ms",
              "p99.9_ms", "cpu_ms/run");
  for (int c : levels) {
    auto r = RunLevel(*session, *inputs, c, runs, *duration, timeout);
    if (!r.ok()) return fail(r.status().ToString());
    std::printf("%-11d %12.1f %9.3f %9.3f %9.3f %9.3f %12.3f\n", c, r->throughput, r->p50, r->p90, r->p99, r->p999,
                r->cpu_ms_per_run);
    results.push_back(*r);
  }
  const double idle = IdleCpuPercent();
  std::printf("idle_cpu_percent=%.2f\n", idle);

  if (!trace_path.empty()) {
    Status s = WriteTrace(*session, *inputs, trace_path, timeout);
    if (!s.ok()) return fail(s.ToString());
  }
  if (!json_path.empty()) {
    std::ofstream file(json_path);
    if (!file) return fail("cannot write '" + json_path + "'");
    file << ResultsJson(model, results, idle).dump(2) << "\n";
  }
  if (!svg_path.empty()) {
    std::ofstream file(svg_path);
    if (!file) return fail("cannot write '" + svg_path + "'");
    file << ResultsSvg(model, results);
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
