// One thread pool per process: TBB's worker threads, with one arena per thread count as the
// limit for the sessions that asked for that many cores. A hundred sessions add no threads, and inter-op (flow graph) and intra-op (parallel_for) work of all of them share
// the same cores instead of oversubscribing them. The pool's gate admits as many runs at once as
// it has cores (admission.h).
#pragma once

#include <memory>

#include <oneapi/tbb/task_arena.h>

#include "scheduler/admission.h"

namespace onnxflow {

struct ThreadPool {
  explicit ThreadPool(int threads) : arena(threads), gate(threads) {}
  tbb::task_arena arena;
  RunGate gate;
};

// `threads` <= 0, or more than the machine's cores, means all cores.
std::shared_ptr<ThreadPool> SharedThreadPool(int threads);

int DefaultThreadCount();

}  // namespace onnxflow
