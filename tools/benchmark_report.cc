#include "tools/benchmark_report.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <numeric>
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
  r.p999_is_max = r.runs < 1000;
  if (r.runs > 0) {
    r.min = latencies.front();
    r.max = latencies.back();
    r.mean = std::accumulate(latencies.begin(), latencies.end(), 0.0) / static_cast<double>(r.runs);
    double sq = 0;
    for (double v : latencies) sq += (v - r.mean) * (v - r.mean);
    r.stddev = r.runs > 1 ? std::sqrt(sq / static_cast<double>(r.runs - 1)) : 0;
  }
  r.cpu_ms_per_run = r.runs > 0 ? cpu_seconds * 1000.0 / static_cast<double>(r.runs) : 0;
  return r;
}

std::string CpuModel() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "unknown";
}

int CoreCount() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  return 0;
}

double PeakRssMb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  return 0;
}

namespace {

std::string ShapesText(const BenchConfig& c) {
  std::string s;
  for (const auto& [name, shape] : c.shapes) s += (s.empty() ? "" : " ") + name + "=" + shape;
  return s.empty() ? "(none)" : s;
}

std::string ThreadsText(const BenchConfig& c) {
  return c.threads > 0 ? std::to_string(c.threads) : "all (" + std::to_string(c.cores) + ")";
}

}  // namespace

std::string ConfigText(const BenchConfig& c) {
  char buf[1024];
  std::snprintf(buf, sizeof buf,
                "model: %s\nonnxflow %s, threads %s, mode %s, inputs %s\nshapes: %s\ncpu: %s, %d cores\n"
                "load %.1f ms, first run %.2f ms\n",
                c.model.c_str(), c.version.c_str(), ThreadsText(c).c_str(), c.mode.c_str(), c.inputs.c_str(),
                ShapesText(c).c_str(), c.cpu_model.c_str(), c.cores, c.load_ms, c.first_run_ms);
  return buf;
}

nlohmann::json ResultsJson(const BenchConfig& c, const std::vector<LevelResult>& results, double idle) {
  nlohmann::json j;
  j["model"] = c.model;
  nlohmann::json shapes = nlohmann::json::object();
  for (const auto& [name, shape] : c.shapes) shapes[name] = shape;
  j["config"] = {{"model", c.model},     {"threads", c.threads},       {"mode", c.mode},
                 {"shapes", shapes},     {"inputs", c.inputs},         {"onnxflow_version", c.version},
                 {"cpu_model", c.cpu_model}, {"cores", c.cores}};
  j["load_ms"] = c.load_ms;
  j["first_run_ms"] = c.first_run_ms;
  j["peak_rss_mb"] = c.peak_rss_mb;
  j["results"] = nlohmann::json::array();
  for (const auto& r : results) {
    j["results"].push_back({{"concurrency", r.concurrency},
                            {"runs", r.runs},
                            {"throughput_per_s", r.throughput},
                            {"mean_ms", r.mean},
                            {"min_ms", r.min},
                            {"max_ms", r.max},
                            {"stddev_ms", r.stddev},
                            {"p50_ms", r.p50},
                            {"p90_ms", r.p90},
                            {"p99_ms", r.p99},
                            {"p999_ms", r.p999},
                            {"p999_is_max", r.p999_is_max},
                            {"cpu_ms_per_run", r.cpu_ms_per_run}});
  }
  j["idle_cpu_percent"] = idle;
  return j;
}

namespace {

// A round step for about `ticks` ticks up to `max`: 1, 2 or 5 times a power of ten.
double NiceStep(double max, int ticks) {
  const double raw = max / ticks;
  const double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

std::string TickLabel(double v, double step) {
  char buf[32];
  std::snprintf(buf, sizeof buf, step >= 1 ? "%.0f" : step >= 0.1 ? "%.1f" : "%.2f", v);
  return buf;
}

}  // namespace

// Concurrency levels sit on a numeric (log2) axis, so 1, 2, 4, 8 are evenly spaced and 1, 3, 16 are
// where they belong. Throughput is read on the left axis, latency (p50 solid, p99 dashed) on the
// right; each series has its own marker shape so that one hidden under another still shows.
std::string ResultsSvg(const BenchConfig& config, const std::vector<LevelResult>& results) {
  // The legend is a row between the title and the plot, so it never covers a data point; the
  // caption below the axis label gets as much height as the configuration has lines.
  const std::string caption = ConfigText(config);
  const double caption_lines = static_cast<double>(std::count(caption.begin(), caption.end(), '\n') + 1);
  const double width = 720, left = 70, right = 80, top = 66, plot_h = 310;
  const double height = top + plot_h + 60 + 14 * caption_lines;
  const double plot_w = width - left - right;
  double max_tp = 0, max_lat = 0;
  int min_c = 1 << 30, max_c = 1;
  for (const auto& r : results) {
    max_tp = std::max(max_tp, r.throughput);
    max_lat = std::max(max_lat, r.p99);
    min_c = std::min(min_c, r.concurrency);
    max_c = std::max(max_c, r.concurrency);
  }
  if (results.empty()) min_c = 1;
  const double tp_step = NiceStep(std::max(max_tp, 1e-3), 5), lat_step = NiceStep(std::max(max_lat, 1e-3), 5);
  const double tp_top = std::ceil(std::max(max_tp, 1e-3) * 1.05 / tp_step) * tp_step;
  const double lat_top = std::ceil(std::max(max_lat, 1e-3) * 1.05 / lat_step) * lat_step;
  const double lo = std::log2(static_cast<double>(min_c)), hi = std::log2(static_cast<double>(max_c));
  auto x = [&](int c) {
    return hi > lo ? left + 20 + (plot_w - 40) * (std::log2(static_cast<double>(c)) - lo) / (hi - lo) : left + plot_w / 2;
  };
  auto y = [&](double v, double max) { return top + plot_h * (1 - v / max); };
  const char* kTp = "#1f77b4";
  const char* kP50 = "#2ca02c";
  const char* kP99 = "#d62728";
  std::ostringstream s;
  char buf[512];
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height
    << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  // The file name, with its folder when the name alone says nothing (the test data's model.onnx).
  std::string title = config.model;
  const size_t slash = title.find_last_of('/');
  if (slash != std::string::npos && slash + 1 < title.size()) {
    const size_t parent = slash > 0 ? title.find_last_of('/', slash - 1) : std::string::npos;
    title = title.substr(slash + 1) == "model.onnx" ? title.substr(parent == std::string::npos ? 0 : parent + 1)
                                                    : title.substr(slash + 1);
  }
  s << "<text x=\"" << width / 2 << "\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">" << Escape(title)
    << ": throughput and latency against concurrency</text>\n";
  std::snprintf(buf, sizeof buf, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#888\"/>\n",
                left, top, plot_w, plot_h);
  s << buf;
  // Round ticks on both axes, gridlines from the left (throughput) axis.
  for (double v = 0; v <= tp_top + tp_step / 2; v += tp_step) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#eee\"/>"
                  "<text x=\"%.0f\" y=\"%.1f\" text-anchor=\"end\" fill=\"%s\">%s</text>\n",
                  left, left + plot_w, y(v, tp_top), y(v, tp_top), left - 6, y(v, tp_top) + 4, kTp, TickLabel(v, tp_step).c_str());
    s << buf;
  }
  for (double v = 0; v <= lat_top + lat_step / 2; v += lat_step) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.1f\" y2=\"%.1f\" stroke=\"#555\"/>"
                  "<text x=\"%.0f\" y=\"%.1f\" fill=\"#333\">%s</text>\n",
                  left + plot_w, left + plot_w + 4, y(v, lat_top), y(v, lat_top), left + plot_w + 7, y(v, lat_top) + 4,
                  TickLabel(v, lat_step).c_str());
    s << buf;
  }
  // Concurrency ticks at powers of two (and every measured level).
  std::map<int, bool> ticks;
  for (int c = 1; c <= max_c; c *= 2) {
    if (c >= min_c) ticks[c] = true;
  }
  for (const auto& r : results) ticks[r.concurrency] = true;
  for (const auto& [c, unused] : ticks) {
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"#555\"/>"
                  "<text x=\"%.1f\" y=\"%.0f\" text-anchor=\"middle\">%d</text>\n",
                  x(c), x(c), top + plot_h, top + plot_h + 4, x(c), top + plot_h + 18, c);
    s << buf;
  }
  std::string tp_points, p50_points, p99_points;
  for (const auto& r : results) {
    std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x(r.concurrency), y(r.throughput, tp_top));
    tp_points += buf;
    std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x(r.concurrency), y(r.p50, lat_top));
    p50_points += buf;
    std::snprintf(buf, sizeof buf, "%.1f,%.1f ", x(r.concurrency), y(r.p99, lat_top));
    p99_points += buf;
  }
  s << "<polyline fill=\"none\" stroke=\"" << kTp << "\" stroke-width=\"2\" points=\"" << tp_points << "\"/>\n";
  s << "<polyline fill=\"none\" stroke=\"" << kP50 << "\" stroke-width=\"2\" points=\"" << p50_points << "\"/>\n";
  s << "<polyline fill=\"none\" stroke=\"" << kP99 << "\" stroke-width=\"2\" stroke-dasharray=\"6,3\" points=\"" << p99_points << "\"/>\n";
  // Markers: a large circle for throughput, a square for p50 and a small diamond for p99, drawn
  // in that order, so coinciding points show as nested shapes.
  for (const auto& r : results) {
    const double cx = x(r.concurrency);
    std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"white\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                  cx, y(r.throughput, tp_top), kTp);
    s << buf;
    std::snprintf(buf, sizeof buf, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\"/>\n", cx - 3.5,
                  y(r.p50, lat_top) - 3.5, kP50);
    s << buf;
    const double py = y(r.p99, lat_top);
    std::snprintf(buf, sizeof buf, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>\n", cx,
                  py - 4, cx + 4, py, cx, py + 4, cx - 4, py, kP99);
    s << buf;
  }
  // Legend: one row above the plot.
  const double ry = top - 16;
  const struct { const char* color; const char* label; const char* dash; } legend[] = {
      {kTp, "throughput (runs/s, left)", ""}, {kP50, "p50 latency (ms, right)", ""}, {kP99, "p99 latency (ms, right)", "6,3"}};
  for (int i = 0; i < 3; ++i) {
    const double lx = left + 190 * i;
    std::snprintf(buf, sizeof buf,
                  "<line x1=\"%.0f\" x2=\"%.0f\" y1=\"%.0f\" y2=\"%.0f\" stroke=\"%s\" stroke-width=\"2\"%s%s%s/>"
                  "<text x=\"%.0f\" y=\"%.0f\">%s</text>\n",
                  lx + 8, lx + 34, ry, ry, legend[i].color, *legend[i].dash ? " stroke-dasharray=\"" : "", legend[i].dash,
                  *legend[i].dash ? "\"" : "", lx + 42, ry + 4, legend[i].label);
    s << buf;
    // The series' marker on its line, as in the plot (where one level stacks them).
    const double mx = lx + 21;
    if (i == 0) {
      std::snprintf(buf, sizeof buf, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"5\" fill=\"white\" stroke=\"%s\" stroke-width=\"2\"/>\n",
                    mx, ry, kTp);
    } else if (i == 1) {
      std::snprintf(buf, sizeof buf, "<rect x=\"%.1f\" y=\"%.1f\" width=\"7\" height=\"7\" fill=\"%s\"/>\n", mx - 3.5, ry - 3.5, kP50);
    } else {
      std::snprintf(buf, sizeof buf, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"%s\"/>\n", mx, ry - 4,
                    mx + 4, ry, mx, ry + 4, mx - 4, ry, kP99);
    }
    s << buf;
  }
  s << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << top + plot_h + 38
    << "\" text-anchor=\"middle\">concurrency (host threads calling Run; log scale)</text>\n";
  s << "<text x=\"16\" y=\"" << top + plot_h / 2 << "\" fill=\"" << kTp << "\" transform=\"rotate(-90 16 " << top + plot_h / 2
    << ")\" text-anchor=\"middle\">throughput (runs/s)</text>\n";
  s << "<text x=\"" << width - 14 << "\" y=\"" << top + plot_h / 2 << "\" transform=\"rotate(90 " << width - 14 << " "
    << top + plot_h / 2 << ")\" text-anchor=\"middle\">latency (ms)</text>\n";
  // Caption: the configuration, so a picture passed around still says what it measured.
  std::istringstream lines(caption);
  std::string line;
  double cy = top + plot_h + 60;
  while (std::getline(lines, line)) {
    s << "<text x=\"" << left << "\" y=\"" << cy << "\" font-size=\"11\" fill=\"#444\">" << Escape(line) << "</text>\n";
    cy += 14;
  }
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

std::string ChromeTrace(const std::vector<RunProfile>& runs) {
  int64_t origin = INT64_MAX;
  for (const auto& run : runs) {
    for (const auto& n : run.nodes) origin = std::min(origin, n.start_ns);
  }
  auto us = [&](int64_t ns) { return static_cast<double>(ns - origin) / 1000.0; };
  nlohmann::json events = nlohmann::json::array();
  std::map<int, bool> threads;
  for (size_t r = 0; r < runs.size(); ++r) {
    int64_t begin = INT64_MAX, end = 0;
    for (const auto& n : runs[r].nodes) {
      begin = std::min(begin, n.start_ns);
      end = std::max(end, n.end_ns);
      threads[n.thread] = true;
      events.push_back({{"name", n.node},
                        {"cat", n.op_type},
                        {"ph", "X"},
                        {"ts", us(n.start_ns)},
                        {"dur", static_cast<double>(n.end_ns - n.start_ns) / 1000.0},
                        {"pid", 1},
                        {"tid", n.thread + 1},
                        {"args", {{"op", n.op_type}, {"run", r + 1}, {"output_shape", n.output_shape}}}});
    }
    if (begin <= end) {
      events.push_back({{"name", "run " + std::to_string(r + 1)},
                        {"ph", "X"},
                        {"ts", us(begin)},
                        {"dur", static_cast<double>(end - begin) / 1000.0},
                        {"pid", 1},
                        {"tid", 0}});
    }
  }
  events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 1}, {"tid", 0}, {"args", {{"name", "runs"}}}});
  for (const auto& [t, unused] : threads) {
    events.push_back({{"name", "thread_name"},
                      {"ph", "M"},
                      {"pid", 1},
                      {"tid", t + 1},
                      {"args", {{"name", "worker " + std::to_string(t)}}}});
  }
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "onnxflow"}}}});
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

  // Columns as wide as what they list. An exporter's node names are scope paths
  // ("/layers/layers.12/layers.12.1/layers/layers.3/Conv"): cut to a fixed width from the right,
  // the nodes of one block all read alike, so a name too long keeps its tail, where they differ.
  const size_t shown = std::min(sorted.size(), static_cast<size_t>(std::max(top, 0)));
  size_t name_w = 4, op_w = 2;
  for (size_t i = 0; i < shown; ++i) {
    name_w = std::max(name_w, std::min(sorted[i].first.size(), kProfileNameWidth));
    op_w = std::max(op_w, sorted[i].second.op_type.size());
  }
  for (const auto& [op, total] : ops) op_w = std::max(op_w, op.size());
  const auto cell = [](const std::string& text, size_t width) {
    std::string c = text.size() <= width ? text : "..." + text.substr(text.size() - (width - 3));
    c.resize(width, ' ');
    return c;
  };
  const auto num = [](const char* format, double value) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), format, value);
    return std::string(buf);
  };

  std::string out = "node time per run (sum over nodes): " + num("%.3f", total_ms / per_run) + " ms\n" +
                    cell("node", name_w) + " " + cell("op", op_w) + "         ms      %  output shape\n";
  for (size_t i = 0; i < shown; ++i) {
    const auto& [name, n] = sorted[i];
    std::string shape = "[";
    for (size_t d = 0; d < n.shape.size(); ++d) shape += (d ? "," : "") + std::to_string(n.shape[d]);
    shape += "]";
    out += cell(name, name_w) + " " + cell(n.op_type, op_w) + " " + num("%10.3f", n.ms / per_run) + " " +
           num("%6.1f", 100.0 * n.ms / std::max(total_ms, 1e-9)) + "  " + shape + "\n";
  }
  std::vector<std::pair<std::string, std::pair<double, int>>> by_op(ops.begin(), ops.end());
  std::sort(by_op.begin(), by_op.end(), [](const auto& a, const auto& b) { return a.second.first > b.second.first; });
  out += "\n" + cell("op", op_w) + "  nodes         ms      %\n";
  for (const auto& [op, total] : by_op) {
    out += cell(op, op_w) + " " + num("%6.0f", total.second) + " " + num("%10.3f", total.first / per_run) + " " +
           num("%6.1f", 100.0 * total.first / std::max(total_ms, 1e-9)) + "\n";
  }
  return out;
}

}  // namespace onnxflow::tools
