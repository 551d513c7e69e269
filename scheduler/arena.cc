#include "scheduler/arena.h"

#include <map>
#include <mutex>

#include <oneapi/tbb/info.h>

namespace onnxflow {

int DefaultThreadCount() { return tbb::info::default_concurrency(); }

std::shared_ptr<ThreadPool> SharedThreadPool(int threads) {
  if (threads <= 0) threads = DefaultThreadCount();
  static std::mutex mutex;
  static auto* pools = new std::map<int, std::weak_ptr<ThreadPool>>();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto pool = (*pools)[threads].lock()) return pool;
  auto pool = std::make_shared<ThreadPool>(threads);
  pool->arena.initialize();
  (*pools)[threads] = pool;
  return pool;
}

}  // namespace onnxflow
