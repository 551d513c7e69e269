// run_model: run one ONNX model from the command line. Its options and exit codes are a contract
// scripts rely on (see README.md):
//   0  done (and matched, with --check)    1  outputs differ from --check
//   2  refused: bad usage, or a model or input it cannot accept (one line on stderr says what)
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/benchmark_report.h"
#include "tools/cli_common.h"
#include "tools/demo_model.h"

namespace onnxflow::tools {
namespace {

constexpr int kDone = 0, kMismatch = 1, kRefused = 2;

struct Options {
  std::string model;
  std::vector<std::string> input_files;  // NAME=FILE
  std::string inputs_dir;
  bool fill = false;
  std::vector<std::string> dims;  // NAME=N
  std::string output_dir;
  std::string check_dir;
  int threads = 0;
  std::string mode = "dataflow";
  int runs = 0;
  bool demo = false;
  bool quiet = false;
  bool profile = false;
  int profile_nodes = 30;
  bool no_optimize = false;
  int64_t max_loop_iterations = 0;  // 0: the session's default
  double timeout = 0;               // seconds per run; 0: none
};

int Refuse(const std::string& message) {
  std::fprintf(stderr, "run_model: %s\n", message.c_str());
  return kRefused;
}

bool SplitPair(const std::string& text, std::string* key, std::string* value) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  *key = text.substr(0, eq);
  *value = text.substr(eq + 1);
  return true;
}

std::string Summary(const Value& v) {
  if (v.is_none()) return "(no value)";
  if (v.is_sequence()) return "sequence of " + std::to_string(v.sequence().tensors.size()) + " tensors";
  const Tensor& t = v.tensor();
  std::string s = std::string(DataTypeName(t.dtype())) + " " + ShapeToString(t.shape());
  const int64_t show = std::min<int64_t>(t.size(), 6);
  if (show > 0 && (t.dtype() == DataType::kFloat || t.dtype() == DataType::kInt64 || t.dtype() == DataType::kInt32 ||
                   t.dtype() == DataType::kDouble || t.dtype() == DataType::kBool)) {
    s += " [";
    for (int64_t i = 0; i < show; ++i) {
      char buf[32];
      switch (t.dtype()) {
        case DataType::kFloat: std::snprintf(buf, sizeof buf, "%.6g", t.data<float>()[i]); break;
        case DataType::kDouble: std::snprintf(buf, sizeof buf, "%.6g", t.data<double>()[i]); break;
        case DataType::kInt64: std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(t.data<int64_t>()[i])); break;
        case DataType::kInt32: std::snprintf(buf, sizeof buf, "%d", t.data<int32_t>()[i]); break;
        default: std::snprintf(buf, sizeof buf, "%d", t.data<bool>()[i] ? 1 : 0); break;
      }
      s += (i ? ", " : "") + std::string(buf);
    }
    s += t.size() > show ? ", ...]" : "]";
  }
  return s;
}

double Percentile(std::vector<double> sorted, double p) {
  std::sort(sorted.begin(), sorted.end());
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())));
  return sorted[i];
}

int Main(const Options& o) {
  if (o.demo == !o.model.empty()) return Refuse("give a MODEL.onnx or --demo (see --help)");
  if (o.mode != "dataflow" && o.mode != "sequential") return Refuse("--mode must be dataflow or sequential");
  if (o.threads < 0) return Refuse("--threads must be positive");
  if (o.runs < 0) return Refuse("--runs must be positive");
  if (o.max_loop_iterations < 0) return Refuse("--max-loop-iterations must be positive");
  if (!(o.timeout >= 0) || o.timeout > 1e7) return Refuse("--timeout must be a number of seconds between 0 and 1e7");

  SessionOptions options;
  options.threads = o.threads;
  options.optimize = !o.no_optimize;
  if (o.max_loop_iterations > 0) options.limits.max_loop_iterations = o.max_loop_iterations;
  options.mode = o.mode == "sequential" ? ExecutionMode::kSequential : ExecutionMode::kDataflow;
  auto loaded = o.demo ? Session::LoadFromBytes(DemoModelBytes(), options) : Session::Load(o.model, options);
  if (!loaded.ok()) return Refuse("refused model: " + loaded.status().ToString());
  const Session& session = *loaded;

  std::map<std::string, int64_t> dim_values;
  for (const auto& d : o.dims) {
    std::string name, value;
    if (!SplitPair(d, &name, &value) || value.find_first_not_of("0123456789") != std::string::npos || value.empty()) {
      return Refuse("--dim expects NAME=N, got '" + d + "'");
    }
    dim_values[name] = std::stoll(value);
  }
  std::map<std::string, std::string> files;
  for (const auto& f : o.input_files) {
    std::string name, path;
    if (!SplitPair(f, &name, &path)) return Refuse("--input expects NAME=FILE, got '" + f + "'");
    files[name] = UserPath(path);
  }
  for (const auto& [name, path] : files) {
    bool known = false;
    for (const auto& info : session.inputs()) known |= info.name == name;
    if (!known) return Refuse("--input: the model has no input named '" + name + "'");
  }

  std::vector<NamedValue> inputs;
  for (size_t i = 0; i < session.inputs().size(); ++i) {
    const ValueInfo& info = session.inputs()[i];
    std::string path;
    if (files.count(info.name)) {
      path = files[info.name];
    } else if (!o.inputs_dir.empty()) {
      path = o.inputs_dir + "/input_" + std::to_string(i) + ".pb";
    }
    if (!path.empty()) {
      auto value = ReadValueFile(path, &info);
      if (!value.ok()) return Refuse("input '" + info.name + "': " + value.status().message());
      inputs.push_back({info.name, std::move(value).value()});
    } else if (o.fill || o.demo) {
      if (info.kind != Value::Kind::kTensor) return Refuse("--fill cannot make a value for non-tensor input '" + info.name + "'");
      Shape shape;
      for (size_t d = 0; d < info.shape.size(); ++d) {
        const std::string& symbol = info.dim_names[d];
        shape.push_back(info.shape[d] >= 0 ? info.shape[d] : (dim_values.count(symbol) ? dim_values[symbol] : 1));
      }
      auto t = FillTensor(info.dtype, shape);
      if (!t.ok()) return Refuse("input '" + info.name + "': " + t.status().message());
      inputs.push_back({info.name, std::move(t).value()});
    } else if (!info.optional) {
      return Refuse("input '" + info.name + "' was not given (use --input, --inputs or --fill)");
    }
  }

  using Clock = std::chrono::steady_clock;
  // Each run gets its own deadline of --timeout seconds from its start.
  auto run_options = [&o] {
    RunOptions options;
    if (o.timeout > 0) {
      options.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(o.timeout));
    }
    return options;
  };
  auto start = Clock::now();
  auto outputs = session.Run(inputs, run_options());
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!outputs.ok()) return Refuse("run failed: " + outputs.status().ToString());

  std::vector<double> times;
  std::vector<RunProfile> profiles(o.profile ? o.runs : 0);
  for (int r = 0; r < o.runs; ++r) {
    RunOptions options = run_options();
    if (o.profile) options.profile = &profiles[r];
    start = Clock::now();
    auto again = session.Run(inputs, options);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!again.ok()) return Refuse("run " + std::to_string(r + 1) + " failed: " + again.status().ToString());
  }

  if (!o.quiet) {
    for (const NamedValue& out : *outputs) std::printf("%s: %s\n", out.name.c_str(), Summary(out.value).c_str());
    std::printf("time: %.3f ms (first run)\n", first_ms);
  }

  if (!o.output_dir.empty()) {
    for (size_t i = 0; i < outputs->size(); ++i) {
      const std::string path = o.output_dir + "/output_" + std::to_string(i) + ".pb";
      Status s = WriteValueFile(path, (*outputs)[i].value, (*outputs)[i].name, &session.outputs()[i]);
      if (!s.ok()) return Refuse(s.message());
    }
  }

  int result = kDone;
  if (!o.check_dir.empty()) {
    for (size_t i = 0; i < outputs->size(); ++i) {
      const std::string path = o.check_dir + "/output_" + std::to_string(i) + ".pb";
      auto expected = ReadValueFile(path, &session.outputs()[i]);
      if (!expected.ok()) return Refuse("--check: " + expected.status().message());
      const Comparison c = CompareValues(*expected, (*outputs)[i].value);
      std::printf("check %s: %s, max abs error %.3g%s%s\n", (*outputs)[i].name.c_str(), c.match ? "match" : "DIFFERS",
                  c.max_abs_error, c.match ? "" : " — ", c.mismatch.c_str());
      if (!c.match) result = kMismatch;
    }
  }

  if (o.runs > 0) {
    std::printf("runs=%d p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f\n", o.runs, Percentile(times, 0.5),
                Percentile(times, 0.9), Percentile(times, 0.99));
  }
  if (o.profile) std::printf("\n%s", ProfileTable(profiles, o.profile_nodes).c_str());
  return result;
}

}  // namespace
}  // namespace onnxflow::tools

int main(int argc, char** argv) {
  onnxflow::tools::Options o;
  using onnxflow::tools::UserPathArg;
  CLI::App app{"Run an ONNX model with onnxflow."};
  onnxflow::tools::AddVersionFlag(app, "run_model");
  app.add_option("model", o.model, "MODEL.onnx")->transform(UserPathArg());
  app.add_option("--input", o.input_files, "NAME=FILE: a graph input from a .pb (TensorProto) or .npy file");
  app.add_option("--inputs", o.inputs_dir, "DIR with input_<i>.pb for the i-th graph input without initializer")
      ->transform(UserPathArg());
  app.add_flag("--fill", o.fill, "fill inputs not given with fixed, deterministic values");
  app.add_option("--dim", o.dims, "NAME=N: the size of a dynamic dimension for --fill (default 1)");
  app.add_option("--output-dir", o.output_dir, "write graph output i as DIR/output_<i>.pb")
      ->transform(UserPathArg());
  app.add_option("--check", o.check_dir, "compare with DIR/output_<i>.pb (rtol 1e-3, atol 1e-7)")
      ->transform(UserPathArg());
  app.add_option("--threads", o.threads, "cores to use (default: all)");
  app.add_option("--mode", o.mode, "dataflow | sequential");
  app.add_option("--runs", o.runs, "time N runs after one warm-up");
  app.add_flag("--demo", o.demo, "run the bundled demo model");
  app.add_flag("--quiet", o.quiet, "print no outputs");
  app.add_flag("--no-optimize", o.no_optimize, "run the graph as written: no constant folding or fusion at load");
  app.add_flag("--profile", o.profile, "with --runs: print where the time went, by node and by op type");
  app.add_option("--profile-nodes", o.profile_nodes, "with --profile: how many of the slowest nodes to list (default 30)")
      ->check(CLI::PositiveNumber);
  app.add_option("--max-loop-iterations", o.max_loop_iterations,
                 "the most iterations one Loop node may run (default 1048576)");
  app.add_option("--timeout", o.timeout, "SECONDS: a run that takes longer ends with DeadlineExceeded (exit 2)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? onnxflow::tools::kDone : onnxflow::tools::kRefused;  // 0: --version
  }
  try {
    return onnxflow::tools::Main(o);
  } catch (const std::exception& e) {
    return onnxflow::tools::Refuse(std::string("internal error: ") + e.what());
  }
}
