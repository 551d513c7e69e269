// Embedding onnxflow in a host service: two models loaded once into one process, requests served
// by a pool of host threads that call Run concurrently. Both sessions share the process-wide
// task arena, so loading more models adds no threads, and per-run intra-op threads shrink as
// more requests are in flight.
//
//   embed_example MODEL_A.onnx MODEL_B.onnx [--workers 8] [--requests 200]
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "include/onnxflow/io.h"
#include "include/onnxflow/session.h"
#include "tools/cli_common.h"

namespace {

// Inputs filled the way run_model --fill does (dynamic dims = 1).
onnxflow::Result<std::vector<onnxflow::NamedValue>> Inputs(const onnxflow::Session& s) {
  std::vector<onnxflow::NamedValue> inputs;
  for (const auto& info : s.inputs()) {
    onnxflow::Shape shape;
    for (int64_t d : info.shape) shape.push_back(d >= 0 ? d : 1);
    ONNXFLOW_ASSIGN_OR_RETURN(onnxflow::Tensor t, onnxflow::FillTensor(info.dtype, shape));
    inputs.push_back({info.name, std::move(t)});
  }
  return inputs;
}

}  // namespace

int main(int argc, char** argv) {
  std::string path_a, path_b;
  int workers = 8, requests = 200;
  CLI::App app{"Serve two models from a pool of host threads."};
  onnxflow::tools::AddVersionFlag(app, "embed_example");
  app.footer(
      "Exit codes: 0 every request answered; 1 some request failed (stderr names it); 2 a model refused.\n"
      "Example:\n"
      "  embed_example a.onnx b.onnx --workers 8 --requests 400");
  app.add_option("model_a", path_a)->required()->transform(onnxflow::tools::UserPathArg());
  app.add_option("model_b", path_b)->required()->transform(onnxflow::tools::UserPathArg());
  app.add_option("--workers", workers, "host threads serving requests")->capture_default_str();
  app.add_option("--requests", requests, "requests in all (alternating between the models)")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  // 1. Load each model once; a Session is immutable and shared by every request thread.
  auto a = onnxflow::Session::Load(path_a);
  auto b = onnxflow::Session::Load(path_b);
  if (!a.ok() || !b.ok()) {
    std::fprintf(stderr, "load failed: %s\n", (!a.ok() ? a.status() : b.status()).ToString().c_str());
    return 2;
  }
  auto inputs_a = Inputs(*a);
  auto inputs_b = Inputs(*b);
  if (!inputs_a.ok() || !inputs_b.ok()) return 2;

  // 2. Request threads call Run concurrently; errors come back as Status, never as exceptions.
  std::atomic<int> next{0}, failed{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> pool;
  for (int w = 0; w < workers; ++w) {
    pool.emplace_back([&] {
      for (int r; (r = next++) < requests;) {
        onnxflow::RunOptions options;
        options.deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);  // per-request budget
        auto out = r % 2 == 0 ? a->Run(*inputs_a, options) : b->Run(*inputs_b, options);
        if (!out.ok()) {
          ++failed;
          std::fprintf(stderr, "request %d: %s\n", r, out.status().ToString().c_str());
        }
      }
    });
  }
  for (auto& t : pool) t.join();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("served %d requests with %d host threads in %.2f s (%.1f requests/s), %d failed\n", requests, workers,
              seconds, requests / seconds, failed.load());
  return failed == 0 ? 0 : 1;
}
