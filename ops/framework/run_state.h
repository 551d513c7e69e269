// Per-run state shared by every kernel of one Session::Run (and its nested subgraph runs):
// the limits, the cancel flag and deadline, and the thread budget for intra-op parallelism.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>

#include "include/onnxflow/session.h"
#include "include/onnxflow/status.h"

namespace onnxflow {

// Cancelled when `options` carry a set cancel flag, DeadlineExceeded when their deadline has
// passed, Ok otherwise: for a running run (RunState::CheckInterrupt) and a queued one (RunGate).
inline Status InterruptStatus(const RunOptions& options) {
  if (options.cancel != nullptr && options.cancel->load(std::memory_order_relaxed))
    return Status(StatusCode::kCancelled, "the run was cancelled");
  if (options.deadline != std::chrono::steady_clock::time_point::max() &&
      std::chrono::steady_clock::now() > options.deadline)
    return Status(StatusCode::kDeadlineExceeded, "the run passed its deadline");
  return Status::Ok();
}

class RunState {
 public:
  RunState(const SessionLimits& limits, const RunOptions& options, int threads)
      : limits_(limits), options_(options), threads_(threads) {}

  const SessionLimits& limits() const { return limits_; }
  // Cores one kernel may split its work over (1 = run inline).
  int threads() const { return threads_; }

  // Cancelled / DeadlineExceeded when the run should stop; cheap enough to call per node.
  Status CheckInterrupt() const { return InterruptStatus(options_); }

  // Records a node's execution when the run is profiled (RunOptions::profile).
  bool profiling() const { return options_.profile != nullptr; }
  void Record(NodeTiming timing) {
    std::lock_guard<std::mutex> lock(profile_mutex_);
    options_.profile->nodes.push_back(std::move(timing));
  }

  // Bytes held by tensors this run allocated (KernelContext::Allocate) and has not freed yet;
  // checked against limits().max_run_bytes. Shared so that tensors which outlive the run (its
  // outputs) can still give their bytes back when they are freed.
  std::atomic<int64_t>& live_bytes() { return *live_bytes_; }
  const std::shared_ptr<std::atomic<int64_t>>& live_bytes_counter() const { return live_bytes_; }

 private:
  SessionLimits limits_;
  RunOptions options_;
  int threads_;
  std::shared_ptr<std::atomic<int64_t>> live_bytes_ = std::make_shared<std::atomic<int64_t>>(0);
  std::mutex profile_mutex_;
};

}  // namespace onnxflow
