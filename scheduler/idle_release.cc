#include "scheduler/idle_release.h"

#include <malloc.h>

#include <system_error>
#include <thread>

#include "include/onnxflow/tensor.h"
#include "ops/math/gemm.h"

namespace onnxflow {

IdleRelease& IdleRelease::Global() {
  static IdleRelease* release = new IdleRelease();  // never destroyed: runs may end after main()
  return *release;
}

void IdleRelease::Begin() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++active_;
}

void IdleRelease::End() {
  std::lock_guard<std::mutex> lock(mutex_);
  last_end_ = std::chrono::steady_clock::now();
  if (--active_ > 0 || due_) return;
  due_ = true;
  if (!started_) {
    try {
      std::thread([this] { Loop(); }).detach();
      started_ = true;
    } catch (const std::system_error&) {  // no thread to be had: memory stays pooled, as during runs
      due_ = false;
      return;
    }
  }
  cv_.notify_one();
}

void IdleRelease::Loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    cv_.wait(lock, [&] { return due_; });
    // Until kIdle has passed since the last run ended, with none running; a run in progress is
    // looked at again a kIdle later.
    while (true) {
      const auto now = std::chrono::steady_clock::now();
      const auto deadline = active_ > 0 ? now + kIdle : last_end_ + kIdle;
      if (active_ == 0 && now >= deadline) break;
      cv_.wait_until(lock, deadline);
    }
    due_ = false;
    lock.unlock();
    ReleasePooledStorage();
    ReleaseAlignedFloats();
    malloc_trim(0);
    lock.lock();
  }
}

}  // namespace onnxflow
