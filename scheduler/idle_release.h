// Memory returns to its floor when the process goes idle. A burst of runs with large (dynamic)
// shapes leaves big buffers in the tensor pool (tensor.cc) and the GEMM's free list (gemm.h);
// they make the next runs fast, but a service that then idles would keep them forever. When the
// last run in the process ends, a task waits in the shared pool; if no run starts within a second
// it frees what both hold and trims malloc's heap. The wait is a condition variable, not a thread
// of its own: it takes no CPU and a starting run wakes it at once, so the worker goes back to work.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

namespace onnxflow {

struct ThreadPool;

class IdleRelease {
 public:
  static IdleRelease& Global();
  static constexpr std::chrono::milliseconds kIdle{1000};

  void Begin();  // a run starts executing
  void End();    // it ended

  // RAII for one run.
  struct Scope {
    Scope() { Global().Begin(); }
    ~Scope() { Global().End(); }
  };

 private:
  void Wait();

  std::mutex mutex_;
  std::condition_variable cv_;
  int64_t active_ = 0;
  uint64_t generation_ = 0;  // bumped when a run starts
  bool scheduled_ = false;   // a Wait task is queued or waiting
  std::shared_ptr<ThreadPool> pool_;
};

}  // namespace onnxflow
