#include "scheduler/idle_release.h"

#include <malloc.h>

#include "include/onnxflow/tensor.h"
#include "ops/framework/tsan_annotations.h"
#include "ops/math/gemm.h"
#include "scheduler/arena.h"

namespace onnxflow {

IdleRelease& IdleRelease::Global() {
  static IdleRelease* release = new IdleRelease();  // never destroyed: runs may end after main()
  return *release;
}

void IdleRelease::Begin() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++active_;
  ++generation_;
  cv_.notify_all();
}

void IdleRelease::End() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (--active_ > 0 || scheduled_) return;
  scheduled_ = true;
  if (pool_ == nullptr) pool_ = SharedThreadPool(0);
  pool_->arena.enqueue(MakeTsanVisible([this] { Wait(); }));
}

void IdleRelease::Wait() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (true) {
    if (active_ > 0) {  // busy again: the run that ends last schedules the next wait
      scheduled_ = false;
      return;
    }
    const uint64_t generation = generation_;
    if (cv_.wait_for(lock, kIdle, [&] { return generation_ != generation || active_ > 0; })) continue;
    scheduled_ = false;
    lock.unlock();
    ReleasePooledStorage();
    ReleaseAlignedFloats();
    malloc_trim(0);
    return;
  }
}

}  // namespace onnxflow
