#include "scheduler/admission.h"

#include <algorithm>
#include <chrono>
#include <memory>

#include "ops/framework/run_state.h"

namespace onnxflow {
namespace {

// How often a queued run with a cancel flag looks at it (the flag has no way to wake us).
constexpr auto kCancelPoll = std::chrono::milliseconds(1);

}  // namespace

Result<int> RunGate::Enter(const RunOptions& options) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (queue_.empty() && executing_ < capacity_) return ++executing_;
  Waiter me;
  queue_.push_back(&me);
  while (!me.admitted) {
    Status interrupted = InterruptStatus(options);
    if (!interrupted.ok()) {
      queue_.erase(std::find(queue_.begin(), queue_.end(), &me));
      return interrupted.WithContext("while waiting for a core");
    }
    auto until = options.deadline;
    if (options.cancel != nullptr) until = std::min(until, std::chrono::steady_clock::now() + kCancelPoll);
    if (until == std::chrono::steady_clock::time_point::max()) {
      me.wake.wait(lock);
    } else {
      me.wake.wait_until(lock, until);
    }
  }
  return executing_;  // Leave handed its place over, so the count did not change
}

void RunGate::EnterAsync(std::function<void(int)> start) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (queue_.empty() && executing_ < capacity_) {
    const int executing = ++executing_;
    lock.unlock();
    start(executing);
    return;
  }
  auto waiter = std::make_unique<Waiter>();
  waiter->start = std::move(start);
  queue_.push_back(waiter.release());
}

void RunGate::Leave() {
  std::unique_lock<std::mutex> lock(mutex_);
  if (queue_.empty()) {
    --executing_;
    return;
  }
  Waiter* next = queue_.front();
  queue_.pop_front();
  if (!next->start) {
    next->admitted = true;
    next->wake.notify_one();
    return;
  }
  std::unique_ptr<Waiter> async(next);
  const int executing = executing_;
  lock.unlock();
  async->start(executing);
}

}  // namespace onnxflow
