// One task arena per thread count, shared by every session in the process: a hundred sessions add
// no threads, and inter-op (flow graph) and intra-op (parallel_for) work of all of them share the
// same cores instead of oversubscribing them.
#pragma once

#include <memory>

#include <oneapi/tbb/task_arena.h>

namespace onnxflow {

// `threads` <= 0 means all cores.
std::shared_ptr<tbb::task_arena> SharedArena(int threads);

int DefaultThreadCount();

}  // namespace onnxflow
