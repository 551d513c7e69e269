// The GEMM's scratch memory: owning, 64-byte aligned float buffers, recycled. GEMM and convolution
// scratch (packed A, B blocks, unfolded images) is taken on every call, and a fresh mapping would
// fault in (and zero) its pages each time. Buffers of 256 KiB to 256 MiB come from the process's
// arena (include/onnxflow/storage_arena.h, 4 KiB-aligned, on huge pages), which tensors share;
// the others from malloc (2 MiB aligned on huge pages from 2 MiB up), through one process-wide
// free list that keeps freed buffers for the next call.
//
// The free list is the one owner of its memory between calls: it keeps at most
// kMaxRetainedScratchBytes, keeps no per-thread buffers, and ReleaseAlignedFloats() returns all it
// keeps to the system (the session calls it after load and after an idle second, with
// ReleasePooledStorage, which releases the arena's free space).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace onnxflow {

// What the free list may keep in all; a freed buffer beyond it goes back to the system at once.
inline constexpr size_t kMaxRetainedScratchBytes = size_t{64} << 20;

struct AlignedFloatsFree {
  size_t bytes = 0;  // the allocation's size, which the free list is keyed by
  bool arena = false;  // taken from the process's arena whatever its size (FromArena)
  void operator()(float* p) const;
};

struct AlignedFloats {
  using Free = AlignedFloatsFree;
  std::unique_ptr<float[], Free> ptr;
  int64_t size = 0;
  static AlignedFloats Make(int64_t n, bool zero = true);
  // Uninitialized, from the process's arena (storage_arena.h) at any size, not kept by the free
  // list: scratch of many sizes that is taken once a task, whose sizes the free list would each
  // keep for good (16-bit weights widened or transformed per task). Make's without an arena.
  static AlignedFloats FromArena(int64_t n);
  float* get() const { return ptr.get(); }
};

// Frees every buffer the free list keeps, so the process returns to its memory floor.
void ReleaseAlignedFloats();
// The bytes the free list keeps now (for tests and for a person watching memory).
size_t RetainedScratchBytes();

}  // namespace onnxflow
