// What `benchmark` reports, in the forms it writes: a table row, JSON, an SVG chart, a trace.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "include/onnxflow/session.h"
#include "include/onnxflow/version.h"

namespace onnxflow::tools {

// The onnxflow version the tools report.
inline constexpr const char* kOnnxflowVersion = ONNXFLOW_VERSION_STRING;

struct LevelResult {
  int concurrency = 0;
  int64_t runs = 0;
  double throughput = 0;  // runs per second of wall time
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0;  // latency, ms
  bool p999_is_max = false;  // fewer than 1000 runs: p99.9 is simply the slowest run
  double mean = 0, min = 0, max = 0, stddev = 0;  // latency, ms
  double cpu_ms_per_run = 0;  // process CPU time divided by runs
};

// What was measured, and on what: echoed in the table, the JSON and the SVG caption.
struct BenchConfig {
  std::string model;
  int threads = 0;  // as asked (0 = all cores)
  std::string mode;
  std::vector<std::pair<std::string, std::string>> shapes;  // input -> "1x3x224x224"
  std::string inputs;  // "fill" or the --inputs folder
  std::string version = kOnnxflowVersion;
  std::string cpu_model;
  int cores = 0;
  double load_ms = 0;       // Session::Load
  double first_run_ms = 0;  // the first Run, allocations and flow-graph construction included
  double peak_rss_mb = 0;   // the process's high-water mark when the measurement ended
};

// /proc/cpuinfo's "model name" and the cores this process may use.
std::string CpuModel();
int CoreCount();
// VmHWM of /proc/self/status, in MiB.
double PeakRssMb();

// `latencies_ms` in any order.
LevelResult Summarize(int concurrency, std::vector<double> latencies_ms, double wall_seconds, double cpu_seconds);

// Lines describing `config` for the text report ("model: ...", "threads: ...", ...).
std::string ConfigText(const BenchConfig& config);

// {"model": ..., "config": {...}, "results": [{"concurrency", "throughput_per_s", "p50_ms", ...}],
//  "idle_cpu_percent": ...}
nlohmann::json ResultsJson(const BenchConfig& config, const std::vector<LevelResult>& results, double idle_cpu_percent);

// Throughput (left axis) and p50 and p99 latency (right axis) against concurrency, with a legend
// and the configuration in the caption.
std::string ResultsSvg(const BenchConfig& config, const std::vector<LevelResult>& results);

// Chrome / Perfetto trace-event JSON: one complete event per node, on the thread that ran it.
std::string ChromeTrace(const RunProfile& profile);
// The same over several runs: each run's nodes on their threads (named "worker N"), each run a
// span of its own on a "runs" track, output shapes in the events' args.
std::string ChromeTrace(const std::vector<RunProfile>& runs);

// A text table of where the time of several runs went: the `top` slowest nodes (mean time, op,
// output shape) and every op type's share of the total. Node names longer than
// kProfileNameWidth show their last characters after "...".
constexpr size_t kProfileNameWidth = 48;
std::string ProfileTable(const std::vector<RunProfile>& runs, int top);

}  // namespace onnxflow::tools
