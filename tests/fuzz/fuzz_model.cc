// Fuzz target: a model from bytes (Session::LoadFromBytes), then, when it loads, one run with
// filled inputs. Small limits and a deadline keep every input fast and bounded in memory.
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"

namespace {

constexpr int64_t kMaxFilledElements = int64_t{1} << 16;

onnxflow::SessionOptions FuzzOptions() {
  onnxflow::SessionOptions options;
  options.threads = 1;
  options.limits.max_tensor_bytes = int64_t{16} << 20;
  options.limits.max_run_bytes = int64_t{64} << 20;
  options.limits.max_subgraph_depth = 8;
  options.limits.max_loop_iterations = 1000;
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace onnxflow;
  static const SessionOptions options = FuzzOptions();
  auto session = Session::LoadFromBytes(std::string(reinterpret_cast<const char*>(data), size), options);
  if (!session.ok()) return 0;
  std::vector<NamedValue> inputs;
  for (const ValueInfo& info : session->inputs()) {
    if (info.kind != Value::Kind::kTensor) continue;  // left absent: the run must refuse or cope
    Shape shape;
    int64_t count = 1;
    for (int64_t d : info.shape) {
      const int64_t n = d >= 0 ? d : 1;
      if (n > kMaxFilledElements) return 0;
      count *= n;
      if (count > kMaxFilledElements) return 0;
      shape.push_back(n);
    }
    auto t = FillTensor(info.dtype, shape);
    if (!t.ok()) continue;
    inputs.push_back({info.name, std::move(t).value()});
  }
  RunOptions run;
  run.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  auto outputs = session->Run(inputs, run);
  (void)outputs;
  return 0;
}
