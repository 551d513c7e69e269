#include "tools/benchmark_report.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

namespace onnxflow::tools {
namespace {

// Nearest-rank percentile of sorted values.
double Percentile(const std::vector<double>& sorted, double p) {
  if (sorted.empty()) return 0;
  size_t rank = static_cast<size_t>(p * static_cast<double>(sorted.size()) + 0.999999);
  rank = std::min(std::max<size_t>(rank, 1), sorted.size());
  return sorted[rank - 1];
}

std::string Escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else out += c;
  }
  return out;
}

}  // namespace

LevelResult Summarize(int concurrency, std::vector<double> latencies, double wall_seconds, double cpu_seconds) {
  std::sort(latencies.begin(), latencies.end());
  LevelResult r;
  r.concurrency = concurrency;
  r.runs = static_cast<int64_t>(latencies.size());
  r.throughput = wall_seconds > 0 ? static_cast<double>(r.runs) / wall_seconds : 0;
  r.p50 = Percentile(latencies, 0.50);
  r.p90 = Percentile(latencies, 0.90);
  r.p99 = Percentile(latencies, 0.99);
  r.p999 = Percentile(latencies, 0.999);
  r.cpu_ms_per_run = r.runs > 0 ? cpu_seconds * 1000.0 / static_cast<double>(r.runs) : 0;
  return r;
}

nlohmann::json ResultsJson(const std::string& model, const std::vector<LevelResult>& results, double idle) {
  nlohmann::json j;
  j["model"] = model;
  j["results"] = nlohmann::json::array();
  for (const auto& r : results) {
    j["results"].push_back({{"concurrency", r.concurrency},
                            {"runs", r.runs},
                            {"throughput_per_s", r.throughput},
                            {"p50_ms", r.p50},
                            {"p90_ms", r.p90},
                            {"p99_ms", r.p99},
                            {"p999_ms", r.p999},
                            {"cpu_ms_per_run", r.cpu_ms_per_run}});
  }
  j["idle_cpu_percent"] = idle;
  return j;
}

std::string ResultsSvg(const std::string& model, const std::vector<LevelResult>& results) {
  const double width = 640, height = 400, left = 70, right = 70, top = 40, bottom = 50;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  double max_tp = 1, max_p99 = 1;
  for (const auto& r : results) {
    max_tp = std::max(max_tp, r.throughput);
    max_p99 = std::max(max_p99, r.p99);
  }
  max_tp *= 1.1;
  max_p99 *= 1.1;
  auto x = [&](size_t i) {
    return left + (results.size() > 1 ? plot_w * static_cast<double>(i) / static_cast<double>(results.size() - 1) : plot_w / 2);
  };
  auto y = [&](double v, double max) { return top + plot_h * (1 - v / max); };
  std::ostringstream s;
  char buf[256];
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s << "<text x=\"" << width / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" << Escape(model) << "</text>\n";
  std::snprintf(buf, sizeof buf, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#888\"/>\n",
                left, top, plot_w, plot_h);
  s << buf;
  for (int t = 0; t <= 4; ++t) {
    const double frac = t / 4.0;
    std::snprintf(buf, sizeof buf, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\" fill=\"#1f77b4\">%.0f</text>\n", left - 6,
                  top + plot_h * (1 - frac) + 4, max_tp * frac);
    s << buf;
    std::snprintf(buf, sizeof buf, "<text x=\"%.0f\" y=\"%.0f\" fill=\"#d62728\">%.1f</text>\n", left + plot_w + 6,
                  top + plot_h * (1 - frac) + 4, max_p99 * frac);
    s << buf;
  }
  std::string tp_points, p99_points;
  for (size_t i = 0; i < results.size(); ++i) {
    std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x(i), y(results[i].throughput, max_tp));
    tp_points += buf;
    std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x(i), y(results[i].p99, max_p99));
    p99_points += buf;
    std::snprintf(buf, sizeof buf, "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>\n", x(i),
                  top + plot_h + 18, results[i].concurrency);
    s << buf;
    std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#1f77b4\"/><circle cx=\"%.1f\" cy=\"%.1f\" r=\"3\" fill=\"#d62728\"/>\n",
                  x(i), y(results[i].throughput, max_tp), x(i), y(results[i].p99, max_p99));
    s << buf;
  }
  s << "<polyline fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"" << tp_points << "\"/>\n";
  s << "<polyline fill=\"none\" stroke=\"#d62728\" stroke-width=\"2\" stroke-dasharray=\"6,3\" points=\"" << p99_points << "\"/>\n";
  s << "<text x=\"" << width / 2 << "\" y=\"" << height - 12 << "\" text-anchor=\"middle\">concurrency</text>\n";
  s << "<text x=\"16\" y=\"" << top + plot_h / 2 << "\" fill=\"#1f77b4\" transform=\"rotate(-90 16 " << top + plot_h / 2
    << ")\" text-anchor=\"middle\">throughput (runs/s)</text>\n";
  s << "<text x=\"" << width - 14 << "\" y=\"" << top + plot_h / 2 << "\" fill=\"#d62728\" transform=\"rotate(90 "
    << width - 14 << " " << top + plot_h / 2 << ")\" text-anchor=\"middle\">p99 latency (ms)</text>\n";
  s << "</svg>\n";
  return s.str();
}

std::string ChromeTrace(const RunProfile& profile) {
  int64_t origin = INT64_MAX;
  for (const auto& n : profile.nodes) origin = std::min(origin, n.start_ns);
  nlohmann::json events = nlohmann::json::array();
  for (const auto& n : profile.nodes) {
    events.push_back({{"name", n.node},
                      {"cat", n.op_type},
                      {"ph", "X"},
                      {"ts", static_cast<double>(n.start_ns - origin) / 1000.0},
                      {"dur", static_cast<double>(n.end_ns - n.start_ns) / 1000.0},
                      {"pid", 1},
                      {"tid", n.thread},
                      {"args", {{"op", n.op_type}}}});
  }
  return nlohmann::json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump() + "\n";
}

std::string ProfileTable(const std::vector<RunProfile>& runs, int top) {
  struct NodeTotal {
    std::string op_type;
    std::vector<int64_t> shape;
    double ms = 0;
  };
  std::map<std::string, NodeTotal> nodes;
  std::map<std::string, std::pair<double, int>> ops;  // total ms, node count per run
  double total_ms = 0;
  for (const RunProfile& run : runs) {
    for (const NodeTiming& t : run.nodes) {
      const double ms = static_cast<double>(t.end_ns - t.start_ns) / 1e6;
      NodeTotal& n = nodes[t.node];
      n.op_type = t.op_type;
      n.shape = t.output_shape;
      n.ms += ms;
      ops[t.op_type].first += ms;
      total_ms += ms;
    }
  }
  for (const auto& [name, n] : nodes) ++ops[n.op_type].second;
  const double per_run = runs.empty() ? 1.0 : static_cast<double>(runs.size());
  std::vector<std::pair<std::string, NodeTotal>> sorted(nodes.begin(), nodes.end());
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.second.ms > b.second.ms; });

  std::string out;
  char line[512];
  std::snprintf(line, sizeof(line), "node time per run (sum over nodes): %.3f ms\n%-32s %-18s %10s %6s  %s\n",
                total_ms / per_run, "node", "op", "ms", "%", "output shape");
  out += line;
  for (size_t i = 0; i < sorted.size() && static_cast<int>(i) < top; ++i) {
    const auto& [name, n] = sorted[i];
    std::string shape = "[";
    for (size_t d = 0; d < n.shape.size(); ++d) shape += (d ? "," : "") + std::to_string(n.shape[d]);
    shape += "]";
    std::snprintf(line, sizeof(line), "%-32.32s %-18.18s %10.3f %6.1f  %s\n", name.c_str(), n.op_type.c_str(),
                  n.ms / per_run, 100.0 * n.ms / std::max(total_ms, 1e-9), shape.c_str());
    out += line;
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> by_op(ops.begin(), ops.end());
  std::sort(by_op.begin(), by_op.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  std::snprintf(line, sizeof(line), "\n%-24s %6s %10s %6s\n", "op", "nodes", "ms", "%");
  out += line;
  for (const auto& [op, total] : by_op) {
    std::snprintf(line, sizeof(line), "%-24.24s %6d %10.3f %6.1f\n", op.c_str(), total.second, total.first / per_run,
                  100.0 * total.first / std::max(total_ms, 1e-9));
    out += line;
  }
  return out;
}

}  // namespace onnxflow::tools
