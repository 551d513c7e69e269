#include "scheduler/arena.h"

#include <map>
#include <mutex>

#include <oneapi/tbb/info.h>

namespace onnxflow {

int DefaultThreadCount() { return tbb::info::default_concurrency(); }

std::shared_ptr<ThreadPool> SharedThreadPool(int threads) {
  // TBB keeps one set of worker threads per process and arenas only limit how many of them work
  // on the arena's tasks, so a session asking for fewer cores is a limit inside that one pool.
  // Asking for more than the machine has would only make TBB warn and ignore the request, and
  // make the pool's gate admit more runs at once than there are cores: such requests get all of
  // them (and share the all-cores pool).
  const int cores = DefaultThreadCount();
  if (threads <= 0 || threads > cores) threads = cores;
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
