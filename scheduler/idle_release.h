// Memory returns to its floor when the process goes idle. A burst of runs with large (dynamic)
// shapes leaves big buffers in the tensor pool (tensor.cc) and the GEMM's free list (gemm.h);
// they make the next runs fast, but a service that then idles would keep them forever. When the
// last run in the process ends, a thread of the runtime's own (started at the first run's end,
// asleep on a condition variable otherwise) waits until a second has passed since the last run
// ended with none running; then it frees what both hold and trims malloc's heap. A busy process
// pays a clock read per run: no run wakes the thread, which looks again when its second is up.
// (It was a task queued in the shared TBB pool at every run's end: the worker woken for it spun
// looking for work between runs, two thirds of a core at one thread, and slowed the runs
// themselves: Silero VAD 0.059 -> 0.053 ms, a 68-point landmark net 0.265 -> 0.249 ms, medians of
// 5 alternated rounds of 2000 runs.)
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace onnxflow {

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
  void Loop();  // the releasing thread

  std::mutex mutex_;
  std::condition_variable cv_;
  int64_t active_ = 0;
  std::chrono::steady_clock::time_point last_end_;  // of the run that ended last
  bool due_ = false;         // the last run ended and no release has followed yet
  bool started_ = false;     // Loop's thread exists
};

}  // namespace onnxflow
