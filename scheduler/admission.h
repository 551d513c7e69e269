// Admission to a shared arena: at most `capacity` runs execute at once (one per core the arena
// has); later runs wait their turn in arrival order, asleep.
//
// Why: a host service with more request threads than cores would otherwise have every request
// compute at once. The OS then time-slices them (a 4 ms tick stretches every latency), and TBB
// moves one run's nodes between cores, so each run loses its caches to the others. Admitted runs
// instead keep a core each (or share the cores when fewer are in flight), and a queued run costs
// no CPU while it waits.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

#include "include/onnxflow/session.h"
#include "include/onnxflow/status.h"

namespace onnxflow {

class RunGate {
 public:
  explicit RunGate(int capacity) : capacity_(capacity < 1 ? 1 : capacity) {}
  RunGate(const RunGate&) = delete;
  RunGate& operator=(const RunGate&) = delete;

  // Waits for a place. Returns how many runs execute now, this one included, or Cancelled /
  // DeadlineExceeded when `options` end the wait first (the run then has no place to Leave).
  Result<int> Enter(const RunOptions& options);

  // Calls start(executing) once the run has a place: now on this thread when one is free, or
  // later on the thread whose Leave frees it. `start` must not block (it hands the run to a pool).
  void EnterAsync(std::function<void(int executing)> start);

  // Gives the place back, or hands it straight to the longest-waiting run.
  void Leave();

  int capacity() const { return capacity_; }

 private:
  struct Waiter {
    std::function<void(int)> start;  // set for EnterAsync; a waiting thread otherwise
    std::condition_variable wake;    // a waiting thread sleeps on its own, so Leave wakes only it
    bool admitted = false;
  };

  const int capacity_;
  std::mutex mutex_;
  std::deque<Waiter*> queue_;  // in arrival order
  int executing_ = 0;
};

}  // namespace onnxflow
