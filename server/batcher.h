// Dynamic batching (opt-in per model): requests that arrive close together are merged along the
// first (batch) dimension into one run, and the outputs are split back.
//
// Why: a small model at batch 1 leaves a core's vector units and caches underused; one run over
// N rows costs less than N runs. The price is the wait for company (up to max_delay) and the
// copy into the merged tensor, so it pays only for models whose per-run cost is dominated by
// per-node overhead or weight traffic, and under enough concurrency to fill a batch.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "include/onnxflow/session.h"
#include "server/metrics.h"

namespace onnxflow::server {

struct BatchingConfig {
  int max_batch_size = 0;  // rows per merged run; <= 1: batching off
  std::chrono::microseconds max_delay{1000};  // how long the first request waits for company
  bool enabled() const { return max_batch_size > 1; }
};

class Batcher {
 public:
  // Refuses a model whose inputs or outputs lack a dynamic first dimension to merge along.
  static Status CheckBatchable(const Session& session);

  Batcher(std::shared_ptr<const Session> session, BatchingConfig config, ModelMetrics* metrics);
  // Runs what is still queued, then stops.
  ~Batcher();
  Batcher(const Batcher&) = delete;
  Batcher& operator=(const Batcher&) = delete;

  // Like Session::RunAsync: `done` is called once, on another thread, with this request's rows.
  void Submit(std::vector<NamedValue> inputs, RunOptions options, Session::RunCallback done);

 private:
  struct Item {
    std::vector<NamedValue> inputs;  // sorted by name, so compatible requests line up
    RunOptions options;
    Session::RunCallback done;
    int64_t rows = 0;  // first dimension; -1 when the inputs disagree (then it runs alone)
    std::chrono::steady_clock::time_point arrived;
  };

  // Shared with the batching thread, which may outlive the Batcher: a callback it makes can drop
  // the last reference to the model (and so the Batcher), and a thread cannot join itself.
  struct State {
    std::shared_ptr<const Session> session;
    BatchingConfig config;
    ModelMetrics* metrics = nullptr;
    std::mutex mutex;
    std::condition_variable wake;
    std::deque<Item> queue;
    int64_t queued_rows = 0;
    bool stop = false;
  };

  static void Loop(State& s);
  static void Dispatch(State& s, std::vector<Item> batch);
  static bool Compatible(const Item& a, const Item& b);

  std::shared_ptr<State> state_;
  std::thread thread_;
};

}  // namespace onnxflow::server
