// What `benchmark` reports, in the forms it writes: a table row, JSON, an SVG chart, a trace.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "include/onnxflow/session.h"

namespace onnxflow::tools {

struct LevelResult {
  int concurrency = 0;
  int64_t runs = 0;
  double throughput = 0;  // runs per second of wall time
  double p50 = 0, p90 = 0, p99 = 0, p999 = 0;  // latency, ms
  double cpu_ms_per_run = 0;  // process CPU time divided by runs
};

// `latencies_ms` in any order.
LevelResult Summarize(int concurrency, std::vector<double> latencies_ms, double wall_seconds, double cpu_seconds);

// {"model": ..., "results": [{"concurrency", "throughput_per_s", "p50_ms", ...}], "idle_cpu_percent": ...}
nlohmann::json ResultsJson(const std::string& model, const std::vector<LevelResult>& results, double idle_cpu_percent);

// Throughput (left axis) and p99 latency (right axis) against concurrency.
std::string ResultsSvg(const std::string& model, const std::vector<LevelResult>& results);

// Chrome / Perfetto trace-event JSON: one complete event per node, on the thread that ran it.
std::string ChromeTrace(const RunProfile& profile);

// A text table of where the time of several runs went: the `top` slowest nodes (mean time, op,
// output shape) and every op type's share of the total.
std::string ProfileTable(const std::vector<RunProfile>& runs, int top);

}  // namespace onnxflow::tools
