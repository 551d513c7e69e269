// run_model: run one ONNX model from the command line. Its options and exit codes are a contract
// scripts rely on (see README.md):
//   0  done (and matched, with --check)    1  outputs differ from --check
//   2  refused: bad usage, or a model or input it cannot accept (one line on stderr says what)
#include <dirent.h>

#include <algorithm>
#include <chrono>
#include <numeric>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/benchmark_report.h"
#include "tools/cli_common.h"
#include "tools/demo_model.h"
#include "tools/inspect.h"

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
  bool info = false;
  bool optimized = false;
  bool json = false;
  std::vector<std::string> shapes;  // NAME=1x3x224x224
  double rtol = 1e-3;
  double atol = 1e-7;
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

std::string TensorSummary(const Tensor& t) {
  std::string s = std::string(DataTypeName(t.dtype())) + " " + ShapeToString(t.shape());
  const int64_t show = std::min<int64_t>(t.size(), 6);
  if (show > 0 && (t.dtype() == DataType::kFloat || t.dtype() == DataType::kInt64 || t.dtype() == DataType::kInt32 ||
                   t.dtype() == DataType::kDouble || t.dtype() == DataType::kBool || t.dtype() == DataType::kString)) {
    s += " [";
    for (int64_t i = 0; i < show; ++i) {
      char buf[32];
      switch (t.dtype()) {
        case DataType::kFloat: std::snprintf(buf, sizeof buf, "%.6g", t.data<float>()[i]); break;
        case DataType::kDouble: std::snprintf(buf, sizeof buf, "%.6g", t.data<double>()[i]); break;
        case DataType::kInt64: std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(t.data<int64_t>()[i])); break;
        case DataType::kInt32: std::snprintf(buf, sizeof buf, "%d", t.data<int32_t>()[i]); break;
        case DataType::kString: std::snprintf(buf, sizeof buf, "\"%.24s\"", t.data<std::string>()[i].c_str()); break;
        default: std::snprintf(buf, sizeof buf, "%d", t.data<bool>()[i] ? 1 : 0); break;
      }
      s += (i ? ", " : "") + std::string(buf);
    }
    s += t.size() > show ? ", ...]" : "]";
  }
  return s;
}

std::string MapSummary(const Map& m) { return "keys " + TensorSummary(m.keys) + ", values " + TensorSummary(m.values); }

std::string Summary(const Value& v) {
  if (v.is_none()) return "(no value)";
  if (v.is_map()) return "map: " + MapSummary(v.map());
  if (v.is_sequence()) {
    const Sequence& seq = v.sequence();
    if (seq.maps.empty()) return "sequence of " + std::to_string(seq.tensors.size()) + " tensors";
    return "sequence of " + std::to_string(seq.maps.size()) + " maps, the first: " + MapSummary(seq.maps[0]);
  }
  return TensorSummary(v.tensor());
}

double Percentile(std::vector<double> sorted, double p) {
  std::sort(sorted.begin(), sorted.end());
  const size_t i = std::min(sorted.size() - 1, static_cast<size_t>(p * static_cast<double>(sorted.size())));
  return sorted[i];
}

// Compares a run's outputs with `dir`/output_<i>.pb; the lines go to `lines`, and `json` (when
// not null) gets one entry per output.
Result<bool> CheckOutputs(const Session& session, const std::vector<NamedValue>& outputs, const std::string& dir,
                          const Options& o, std::string* lines, nlohmann::json* json, double* worst) {
  bool all = true;
  for (size_t i = 0; i < outputs.size(); ++i) {
    const std::string path = dir + "/output_" + std::to_string(i) + ".pb";
    auto expected = ReadValueFile(path, &session.outputs()[i]);
    if (!expected.ok()) return InvalidArgument("--check: " + expected.status().message());
    const Comparison c = CompareValues(*expected, outputs[i].value, o.rtol, o.atol);
    char line[1024];
    std::snprintf(line, sizeof line, "check %s: %s, max abs error %.3g%s%s\n", outputs[i].name.c_str(),
                  c.match ? "match" : "DIFFERS", c.max_abs_error, c.match ? "" : " — ", c.mismatch.c_str());
    *lines += line;
    if (json != nullptr) {
      json->push_back({{"output", outputs[i].name}, {"match", c.match}, {"max_abs_error", c.max_abs_error}});
      if (!c.match) json->back()["mismatch"] = c.mismatch;
    }
    *worst = std::max(*worst, c.max_abs_error);
    all &= c.match;
  }
  return all;
}

// --inputs CASE_DIR holding test_data_set_*: every set runs and is checked against its outputs.
// A set that cannot run (its inputs refused, the run failed) is reported and counted, and the
// others still run: the summary line comes last either way, and the exit code is the worst
// outcome (refused, then differs).
int RunCase(const Session& session, const Options& o, const InputShapes& shapes,
            const std::vector<std::string>& sets) {
  int matched = 0, refused = 0;
  nlohmann::json json = nlohmann::json::array();
  for (const std::string& set : sets) {
    const std::string dir = o.inputs_dir + "/" + set;
    auto refuse = [&](const std::string& why) {
      ++refused;
      Refuse(set + ": " + why);
      if (o.json) json.push_back({{"set", set}, {"refused", why}});
    };
    auto inputs = GatherInputs(session, shapes, {}, dir, o.fill || o.demo);
    if (!inputs.ok()) {
      refuse(inputs.status().message());
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    auto outputs = session.Run(*inputs, WithTimeout(o.timeout));
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    if (!outputs.ok()) {
      refuse("run failed: " + outputs.status().ToString());
      continue;
    }
    std::string lines;
    nlohmann::json checks = nlohmann::json::array();
    double worst = 0;
    auto match = CheckOutputs(session, *outputs, dir, o, &lines, &checks, &worst);
    if (!match.ok()) {
      refuse(match.status().message());
      continue;
    }
    matched += *match ? 1 : 0;
    if (o.json) {
      json.push_back({{"set", set}, {"match", *match}, {"max_abs_error", worst}, {"ms", ms}, {"outputs", checks}});
    } else {
      std::printf("%s: %s, max abs error %.3g, %.3f ms\n", set.c_str(), *match ? "match" : "DIFFERS", worst, ms);
      if (!*match) std::printf("%s", lines.c_str());
    }
  }
  const int differ = static_cast<int>(sets.size()) - matched - refused;
  if (o.json) {
    nlohmann::json summary{{"sets", json}, {"matched", matched}, {"differ", differ}};
    if (refused > 0) summary["refused"] = refused;
    std::printf("%s\n", summary.dump(2).c_str());
  } else {
    std::printf("sets=%zu matched=%d differ=%d%s\n", sets.size(), matched, differ,
                refused > 0 ? (" refused=" + std::to_string(refused)).c_str() : "");
  }
  return refused > 0 ? kRefused : differ == 0 ? kDone : kMismatch;
}

std::vector<std::string> TestDataSets(const std::string& dir) {
  std::vector<std::string> sets;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      if (std::string(e->d_name).rfind("test_data_set_", 0) == 0) sets.push_back(e->d_name);
    }
    closedir(d);
  }
  // test_data_set_10 after test_data_set_9
  std::sort(sets.begin(), sets.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() < b.size() : a < b;
  });
  return sets;
}

int Main(const Options& o) {
  if (o.demo == !o.model.empty()) return Refuse("give a MODEL.onnx or --demo (see --help)");
  if (o.mode != "dataflow" && o.mode != "sequential") return Refuse("--mode must be dataflow or sequential");
  if (o.threads < 0) return Refuse("--threads must be positive");
  if (o.runs < 0) return Refuse("--runs must be positive");
  if (o.max_loop_iterations < 0) return Refuse("--max-loop-iterations must be positive");
  if (!(o.timeout >= 0) || o.timeout > 1e7) return Refuse("--timeout must be a number of seconds between 0 and 1e7");
  if (o.profile && o.runs == 0) return Refuse("--profile needs --runs N: it reports the N timed runs (e.g. --runs 10 --profile)");
  if (o.rtol < 0 || o.atol < 0) return Refuse("--rtol and --atol must not be negative");
  if (o.optimized && !o.info) return Refuse("--optimized goes with --info");

  SessionOptions options;
  options.threads = o.threads;
  options.optimize = !o.no_optimize;
  if (o.max_loop_iterations > 0) options.limits.max_loop_iterations = o.max_loop_iterations;
  options.mode = o.mode == "sequential" ? ExecutionMode::kSequential : ExecutionMode::kDataflow;
  if (o.info) {
    if (o.demo) return Refuse("--info needs a MODEL.onnx");
    auto text = InspectModel(o.model, options, InspectOptions{o.optimized, o.json});
    if (!text.ok()) return Refuse("refused model: " + text.status().ToString());
    std::printf("%s", text->c_str());
    return kDone;
  }
  auto loaded = o.demo ? Session::LoadFromBytes(DemoModelBytes(), options) : Session::Load(o.model, options);
  if (!loaded.ok()) return Refuse("refused model: " + loaded.status().ToString());
  const Session& session = *loaded;

  auto shapes = ParseInputShapes(session, o.dims, o.shapes);
  if (!shapes.ok()) return Refuse(shapes.status().message());
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
  if (!o.inputs_dir.empty()) {
    const std::vector<std::string> sets = TestDataSets(o.inputs_dir);
    if (!sets.empty()) {
      if (!files.empty() || !o.check_dir.empty() || o.runs > 0) {
        return Refuse("--inputs " + o.inputs_dir + " is a case folder (test_data_set_*): it goes without --input, --check and --runs");
      }
      return RunCase(session, o, *shapes, sets);
    }
  }

  auto inputs = GatherInputs(session, *shapes, files, o.inputs_dir, o.fill || o.demo);
  if (!inputs.ok()) return Refuse(inputs.status().message());

  using Clock = std::chrono::steady_clock;
  auto start = Clock::now();
  auto outputs = session.Run(*inputs, WithTimeout(o.timeout));
  const double first_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (!outputs.ok()) return Refuse("run failed: " + outputs.status().ToString());

  nlohmann::json json;
  if (o.json) {
    json["outputs"] = nlohmann::json::array();
    for (const NamedValue& out : *outputs) {
      nlohmann::json entry{{"name", out.name}};
      if (out.value.is_tensor()) {
        entry["type"] = DataTypeName(out.value.tensor().dtype());
        entry["shape"] = out.value.tensor().shape();
      } else {
        entry["summary"] = Summary(out.value);
      }
      json["outputs"].push_back(entry);
    }
    json["first_run_ms"] = first_ms;
  } else if (!o.quiet) {
    for (const NamedValue& out : *outputs) std::printf("%s: %s\n", out.name.c_str(), Summary(out.value).c_str());
    std::printf("time: %.3f ms (first run)\n", first_ms);
  }

  if (!o.output_dir.empty()) {
    std::error_code made;  // the folder and its parents, as a user naming a new one expects
    std::filesystem::create_directories(o.output_dir, made);
    if (made) return Refuse("cannot create '" + o.output_dir + "': " + made.message());
    for (size_t i = 0; i < outputs->size(); ++i) {
      const std::string path = o.output_dir + "/output_" + std::to_string(i) + ".pb";
      Status s = WriteValueFile(path, (*outputs)[i].value, (*outputs)[i].name, &session.outputs()[i]);
      if (!s.ok()) return Refuse(s.message());
    }
  }

  int result = kDone;
  if (!o.check_dir.empty()) {
    std::string lines;
    nlohmann::json checks = nlohmann::json::array();
    double worst = 0;
    auto match = CheckOutputs(session, *outputs, o.check_dir, o, &lines, o.json ? &checks : nullptr, &worst);
    if (!match.ok()) return Refuse(match.status().message());
    if (!*match) result = kMismatch;
    if (o.json) {
      json["check"] = checks;
    } else {
      std::printf("%s", lines.c_str());
    }
  }

  // The first run's outputs have been printed, written and checked: they go before the timed runs,
  // which would otherwise each hold a second set beside them (YOLOv8n's 2.8 MB output was 6% of
  // its float16 form's peak RSS).
  outputs->clear();
  outputs->shrink_to_fit();
  std::vector<double> times;
  std::vector<RunProfile> profiles(o.profile ? o.runs : 0);
  for (int r = 0; r < o.runs; ++r) {
    RunOptions options = WithTimeout(o.timeout);
    if (o.profile) options.profile = &profiles[r];
    start = Clock::now();
    auto again = session.Run(*inputs, options);
    times.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    if (!again.ok()) return Refuse("run " + std::to_string(r + 1) + " failed: " + again.status().ToString());
  }

  // The profile table comes before the timing line: scripts read the last line as runs=...
  if (o.profile && !o.json) std::printf("%s\n", ProfileTable(profiles, o.profile_nodes).c_str());
  if (o.runs > 0) {
    const double p50 = Percentile(times, 0.5), p90 = Percentile(times, 0.9), p99 = Percentile(times, 0.99);
    if (o.json) {
      json["runs"] = o.runs;
      json["p50_ms"] = p50;
      json["p90_ms"] = p90;
      json["p99_ms"] = p99;
      json["mean_ms"] = std::accumulate(times.begin(), times.end(), 0.0) / static_cast<double>(times.size());
    } else {
      std::printf("runs=%d p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f\n", o.runs, p50, p90, p99);
    }
  }
  if (o.json) std::printf("%s\n", json.dump(2).c_str());
  return result;
}

}  // namespace
}  // namespace onnxflow::tools

int main(int argc, char** argv) {
  onnxflow::tools::Options o;
  using onnxflow::tools::UserPathArg;
  CLI::App app{"Run an ONNX model with onnxflow, check its outputs, time it, or describe it (--info).\n"};
  app.footer(
      "Exit codes: 0 done (and matched, with --check or a case folder); 1 outputs differ; 2 refused (bad usage,\n"
      "or a model or input it cannot accept; one line on stderr says what).\n"
      "Examples:\n"
      "  run_model model.onnx --fill --shape data=1x3x224x224 --runs 20\n"
      "  run_model model.onnx --inputs case_dir            # every test_data_set_* in case_dir, checked\n"
      "  run_model --info model.onnx --optimized           # inputs, opsets, metadata, op histogram, fusions");
  onnxflow::tools::AddVersionFlag(app, "run_model");
  app.add_option("model", o.model, "MODEL.onnx")->transform(UserPathArg());
  app.add_flag("--info", o.info, "describe the model (inputs, outputs, opsets, metadata, op histogram); do not run it");
  app.add_flag("--optimized", o.optimized, "with --info: the graph after the load passes, fused nodes traced to the ONNX nodes they replaced");
  app.add_option("--input", o.input_files, "NAME=FILE: a graph input from a .pb (TensorProto) or .npy file");
  app.add_option("--inputs", o.inputs_dir,
                 "DIR with input_<i>.pb for the i-th graph input without initializer; or a case folder: every "
                 "test_data_set_* in it runs and is checked against its output_<i>.pb")
      ->transform(UserPathArg());
  app.add_flag("--fill", o.fill, "fill inputs not given with fixed, deterministic values");
  app.add_option("--dim", o.dims, "NAME=N: the size of a named dynamic dimension for --fill (default 1)");
  app.add_option("--shape", o.shapes, "NAME=1x3x224x224: the whole shape of an input for --fill (any dynamic dims)");
  app.add_option("--output-dir", o.output_dir, "write graph output i as DIR/output_<i>.pb (DIR made if missing)")
      ->transform(UserPathArg());
  app.add_option("--check", o.check_dir, "compare with DIR/output_<i>.pb (|a-e| <= atol + rtol*|e|)")
      ->transform(UserPathArg());
  app.add_option("--rtol", o.rtol, "relative tolerance of --check and case folders")->capture_default_str();
  app.add_option("--atol", o.atol, "absolute tolerance of --check and case folders")->capture_default_str();
  app.add_option("--threads", o.threads, "cores to use (default 0: all)");
  app.add_option("--mode", o.mode, "dataflow | sequential")->capture_default_str();
  app.add_option("--runs", o.runs, "time N runs after one warm-up (default 0: none)");
  app.add_flag("--demo", o.demo, "run the bundled demo model");
  app.add_flag("--quiet", o.quiet, "print no outputs");
  app.add_flag("--json", o.json, "print the results (outputs, times, checks; or --info) as one JSON object");
  app.add_flag("--no-optimize", o.no_optimize, "run the graph as written: no constant folding or fusion at load");
  app.add_flag("--profile", o.profile, "with --runs: print where the time went, by node and by op type");
  app.add_option("--profile-nodes", o.profile_nodes, "with --profile: how many of the slowest nodes to list")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
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
