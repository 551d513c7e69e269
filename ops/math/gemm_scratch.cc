#include "ops/math/gemm_scratch.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <utility>
#include <vector>

#include <oneapi/tbb/spin_mutex.h>

#include "include/onnxflow/storage_arena.h"

namespace onnxflow {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Freed AlignedFloats of at least kMinKept bytes kept for reuse, up to kMaxRetainedScratchBytes and
// kMaxKept buffers (a linear search is enough). A request takes the smallest kept buffer that fits
// it without wasting more than half (a GEMM's block sizes repeat run after run). Below a page,
// malloc recycles without new pages. From a page up, malloc's recycling depends on what else the
// process allocates: a heap top it trims is faulted in again at the next run, and a page fault on
// this VM costs 10-30 us. Under run_model --profile (a few small allocations per node) a 16 KB
// im2col block was freed into the trimmed top every run: a one-node Conv took 0.25 ms, not 0.012.
// A thread takes back a buffer it gave, when one fits: its lines are in that core's cache, where
// another core's buffer would first be fetched from (or invalidated in) the other core's. Locked
// with a spin lock: the tasks of a kernel split over the cores take and give at the same moments.
class FloatsFreeList {
 public:
  static constexpr size_t kMinKept = size_t{4} << 10;
  static constexpr size_t kMaxKept = 256;

  static FloatsFreeList& Global() {
    static FloatsFreeList* list = new FloatsFreeList();  // never destroyed: kernels may outlive main()
    return *list;
  }

  // A kept buffer of `bytes` to twice that, or null; `*bytes` becomes its size (what it is freed
  // with).
  void* Take(size_t* bytes) {
    if (*bytes < kMinKept) return nullptr;
    const std::thread::id self = std::this_thread::get_id();
    tbb::spin_mutex::scoped_lock lock(mutex_);
    // This thread's buffers first, then the smallest.
    const auto rank = [&](const Kept& k) { return std::make_pair(k.giver != self, k.bytes); };
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->bytes < *bytes || it->bytes > 2 * *bytes) continue;
      if (best == kept_.end() || rank(*it) < rank(*best)) best = it;
    }
    if (best == kept_.end()) return nullptr;
    void* p = best->ptr;
    *bytes = best->bytes;
    retained_ -= best->bytes;
    kept_.erase(best);
    return p;
  }

  void Release() {
    std::vector<Kept> kept;
    {
      tbb::spin_mutex::scoped_lock lock(mutex_);
      kept.swap(kept_);
      retained_ = 0;
    }
    for (const Kept& k : kept) std::free(k.ptr);
  }

  // Keeps the buffer, or returns false when the list is full (the caller frees it).
  bool Give(void* p, size_t bytes) {
    if (bytes < kMinKept) return false;
    const std::thread::id self = std::this_thread::get_id();
    tbb::spin_mutex::scoped_lock lock(mutex_);
    if (retained_ + bytes > kMaxRetainedScratchBytes || kept_.size() >= kMaxKept) return false;
    retained_ += bytes;
    kept_.push_back({p, bytes, self});
    return true;
  }

  size_t retained() {
    tbb::spin_mutex::scoped_lock lock(mutex_);
    return retained_;
  }

 private:
  struct Kept {
    void* ptr;
    size_t bytes;
    std::thread::id giver;
  };
  tbb::spin_mutex mutex_;
  std::vector<Kept> kept_;
  size_t retained_ = 0;
};

}  // namespace

void ReleaseAlignedFloats() { FloatsFreeList::Global().Release(); }

size_t RetainedScratchBytes() { return FloatsFreeList::Global().retained(); }

void AlignedFloatsFree::operator()(float* p) const {
  if (StorageArena* arena = this->arena ? ProcessArena() : ArenaFor(bytes)) {
    arena->Give(p);
  } else if (!FloatsFreeList::Global().Give(p, bytes)) {
    std::free(p);
  }
}

AlignedFloats AlignedFloats::FromArena(int64_t n) {
  StorageArena* arena = ProcessArena();
  if (arena == nullptr) return Make(n, /*zero=*/false);
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float) + 63) / 64 * 64;
  void* p = arena->Take(bytes);
  if (p == nullptr) throw std::bad_alloc();
  AlignedFloats out;
  out.ptr = std::unique_ptr<float[], Free>(static_cast<float*>(p), Free{bytes, /*arena=*/true});
  out.size = n;
  return out;
}

AlignedFloats AlignedFloats::Make(int64_t n, bool zero) {
  size_t bytes = static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float);
  void* p = nullptr;
  if (StorageArena* arena = ArenaFor(bytes)) {
    // From 256 KiB, the arena tensors come from: a convolution's scratch (Winograd's transformed
    // image, up to 8 MB) and the GEMM's blocks fit in space the run's freed tensors left, where a
    // free list of its own kept them beside those. Peak RSS at 2 threads, tensors alone in the
    // arena -> scratch too: YOLOv8n 112 -> 92 MB, YOLOv8s-like 332 -> 267 MB, BERT-base 447 -> 394 MB.
    p = arena->Take(bytes);
  } else {
    // Packed weights and big blocks are streamed once per use: on 4 KiB pages the hardware
    // prefetcher restarts at every page and the TLB misses; 2 MiB pages avoid both. Rounding up
    // keeps `bytes` outside the arena's range (below 256 KiB it rounds to 64 bytes, above 256 MiB
    // to 2 MiB: both bounds are multiples), so the buffer is freed the way it was made.
    const bool huge = bytes >= kHugePage;
    const size_t align = huge ? kHugePage : 64;
    bytes = (bytes + align - 1) / align * align;
    p = FloatsFreeList::Global().Take(&bytes);
    if (p == nullptr) {
      p = std::aligned_alloc(align, bytes);
      if (p != nullptr && huge) madvise(p, bytes, MADV_HUGEPAGE);
    }
  }
  if (p == nullptr) throw std::bad_alloc();
  AlignedFloats out;
  out.ptr = std::unique_ptr<float[], Free>(static_cast<float*>(p), Free{bytes});
  if (zero) std::memset(p, 0, bytes);
  out.size = n;
  return out;
}

}  // namespace onnxflow
