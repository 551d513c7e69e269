// Happens-before edges for ThreadSanitizer where onnxflow hands work to oneTBB and takes it back
// (task_arena::execute and enqueue, flow-graph nodes, parallel_for). In other builds all of this
// compiles to nothing.
//
// Why: Debian's libtbb is not built with -fsanitize=thread, so TSan cannot see the synchronisation
// inside it (task deques, arena slots, wait contexts). A task body running on a worker then looks
// unordered with the thread that spawned it, and that thread, after wait/execute returns, looks
// unordered with the task. onnxflow's own atomics and mutexes are instrumented; only these hand-offs
// need telling. The alternative, suppressing reports under TBB frames, would hide every real race
// in a kernel, since all kernels run beneath a TBB task.
//
// Two pieces:
// - TsanVisible(f) wraps a functor given to TBB. Building or copying it releases at the new object's
//   address; calling it first acquires at its own address (which needs no read of the object), then
//   runs f. So everything the thread that built the functor did before happens before the call,
//   through any number of copies TBB makes on any thread. Its destructor releases too, for TBB's
//   reuse of the memory.
// - HappensBefore(addr) / HappensAfter(addr) for the way back (a task's writes, read by the thread
//   that waited for it) and for per-run state (a flow graph built once, bound to each run). Use one
//   address per direction, so sibling tasks stay unordered with each other and a race between two
//   chunks of one parallel_for is still reported.
//
// Accesses that oneTBB's own templates make to their task objects (the top frame in tbb::detail)
// are covered by race_top suppressions in tests/tsan_suppressions.txt instead.
#pragma once

#include <utility>

#if defined(__SANITIZE_THREAD__)
#define ONNXFLOW_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define ONNXFLOW_TSAN 1
#endif
#endif

#ifdef ONNXFLOW_TSAN
extern "C" void __tsan_acquire(void* addr);
extern "C" void __tsan_release(void* addr);
#endif

namespace onnxflow {

// Everything this thread did so far happens before whatever follows a later HappensAfter(addr).
inline void HappensBefore(const void* addr) {
#ifdef ONNXFLOW_TSAN
  __tsan_release(const_cast<void*>(addr));
#else
  (void)addr;
#endif
}

// This thread now comes after every HappensBefore(addr) made so far.
inline void HappensAfter(const void* addr) {
#ifdef ONNXFLOW_TSAN
  __tsan_acquire(const_cast<void*>(addr));
#else
  (void)addr;
#endif
}

#ifdef ONNXFLOW_TSAN

template <typename F>
class TsanVisible {
 public:
  explicit TsanVisible(F f) : f_((HappensAfter(this), std::move(f))) { HappensBefore(this); }
  TsanVisible(const TsanVisible& other) : f_((HappensAfter(this), HappensAfter(&other), other.f_)) {
    HappensBefore(this);
  }
  TsanVisible(TsanVisible&& other) : f_((HappensAfter(this), HappensAfter(&other), std::move(other.f_))) {
    HappensBefore(this);
  }
  // TBB recycles task memory through its own (uninstrumented) pool: the last use of this object
  // happens before the next object built at the same address (the HappensAfter(this) above).
  ~TsanVisible() { HappensBefore(this); }
  TsanVisible& operator=(const TsanVisible&) = delete;

  template <typename... Args>
  decltype(auto) operator()(Args&&... args) const {
    HappensAfter(this);
    return f_(std::forward<Args>(args)...);
  }

 private:
  F f_;
};

template <typename F>
TsanVisible<F> MakeTsanVisible(F f) {
  return TsanVisible<F>(std::move(f));
}

#else

// Not a TSan build: the functor itself, unchanged.
template <typename F>
F MakeTsanVisible(F f) {
  return f;
}

#endif

}  // namespace onnxflow
