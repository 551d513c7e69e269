#include "scheduler/arena.h"

#include <map>
#include <mutex>

#include <oneapi/tbb/info.h>

namespace onnxflow {

int DefaultThreadCount() { return tbb::info::default_concurrency(); }

std::shared_ptr<tbb::task_arena> SharedArena(int threads) {
  if (threads <= 0) threads = DefaultThreadCount();
  static std::mutex mutex;
  static auto* arenas = new std::map<int, std::weak_ptr<tbb::task_arena>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto arena = (*arenas)[threads].lock()) return arena;
  auto arena = std::make_shared<tbb::task_arena>(threads);
  arena->initialize();
  (*arenas)[threads] = arena;
  return arena;
}

}  // namespace onnxflow
