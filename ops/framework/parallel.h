// Intra-op parallelism: split [0, n) over the run's cores with tbb::parallel_for, but only when
// the work is big enough to pay for it. `cost_per_item` is a rough count of simple operations per
// item; below about 64K operations in all the loop runs inline, because waking a worker costs
// more than that (and many concurrent runs of a small model should each keep to one core).
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>

#include <oneapi/tbb/blocked_range.h>
#include <oneapi/tbb/parallel_for.h>
#include <oneapi/tbb/task_arena.h>

#include "ops/framework/kernel.h"
#include "ops/framework/tsan_annotations.h"

namespace onnxflow {

inline constexpr int64_t kMinParallelWork = 1 << 16;

// A multiply-add of a vectorized product (GEMM blocks, convolutions, attention, packing for them)
// counts as a quarter of an operation: lanes and FMA ports do several per cycle. So a product stays
// on the calling thread below about 2^19 multiply-adds (measured on the GEMM, where splitting less
// lost to waking the worker), and callers pass MacCost(multiply-adds per item) as cost_per_item.
inline constexpr int64_t kMacsPerOperation = 4;
inline constexpr int64_t MacCost(int64_t macs_per_item) {
  return macs_per_item / kMacsPerOperation > 0 ? macs_per_item / kMacsPerOperation : 1;
}

// A copied element counts as this many operations. Copies are bound by memory, and the tensor they
// read was often just written by a kernel split over both cores, so half of it sits in the other
// core's cache: split too, the two cores fetch those lines side by side (ShuffleNet's channel
// shuffles on 14x14 maps, 53K elements, ran 2.5x slower on two cores than on one, inline).
inline constexpr int64_t kCopyCostPerElement = 4;

// tbb::parallel_for over [0, n), calling body(begin, end) per chunk; the simple partitioner halves
// ranges until they hold at most `grain` items. The one place kernels hand loop bodies to TBB, so
// that ThreadSanitizer sees the hand-off both ways (tsan_annotations.h); no cost in other builds.
template <typename F>
void ParallelChunks(int64_t n, int64_t grain, F&& body) {
  char done = 0;  // every chunk's writes happen before the caller goes on
  tbb::parallel_for(tbb::blocked_range<int64_t>(0, n, grain),
                    MakeTsanVisible([&](const tbb::blocked_range<int64_t>& r) {
                      body(r.begin(), r.end());
                      HappensBefore(&done);
                    }),
                    tbb::simple_partitioner());
  HappensAfter(&done);
}

// The calling worker's slot in [0, WorkerSlots()), or negative outside the workers: for a kernel that
// keeps scratch per worker through one call (a task reusing what the worker's previous task made).
inline int WorkerSlot() { return tbb::this_task_arena::current_thread_index(); }
inline int WorkerSlots() { return tbb::this_task_arena::max_concurrency(); }

// For kernels that cut their own tasks: task(i) for every i in [0, tasks), one TBB task each over
// the run's cores when `work` (a rough count of operations in all) pays for waking them, else inline.
template <typename F>
void ParallelTasks(const KernelContext& ctx, int64_t tasks, int64_t work, F&& task) {
  if (ctx.threads() > 1 && tasks > 1 && work >= 4 * kMinParallelWork) {
    ParallelChunks(tasks, 1, [&](int64_t t0, int64_t t1) {
      for (int64_t i = t0; i < t1; ++i) task(i);
    });
    return;
  }
  for (int64_t i = 0; i < tasks; ++i) task(i);
}

// Over `threads` cores (a kernel's KernelContext::threads(), for code that is handed the count).
template <typename F>
void ParallelFor(int threads, int64_t n, int64_t cost_per_item, F&& body) {
  if (n <= 0) return;
  const int64_t work = n * std::max<int64_t>(cost_per_item, 1);
  if (threads <= 1 || n == 1 || work < 2 * kMinParallelWork) {
    body(int64_t{0}, n);
    return;
  }
  // Chunks of at least kMinParallelWork, and a few per core so uneven chunks balance.
  const int64_t max_chunks = static_cast<int64_t>(threads) * 4;
  const int64_t chunks = std::min(max_chunks, work / kMinParallelWork);
  const int64_t grain = std::max<int64_t>(1, (n + chunks - 1) / chunks);
  ParallelChunks(n, grain, body);
}

template <typename F>
void ParallelFor(const KernelContext& ctx, int64_t n, int64_t cost_per_item, F&& body) {
  ParallelFor(ctx.threads(), n, cost_per_item, std::forward<F>(body));
}

}  // namespace onnxflow
