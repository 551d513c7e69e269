// The GEMM's scratch memory: owning, 64-byte aligned float buffers, recycled. GEMM and convolution
// scratch (packed A, B blocks, unfolded images) is taken on every call, and a fresh mapping would
// fault in (and zero) its pages each time. Buffers of 1 MiB to 256 MiB come from the process's
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
  void operator()(float* p) const;
};

struct AlignedFloats {
  using Free = AlignedFloatsFree;
  std::unique_ptr<float[], Free> ptr;
  int64_t size = 0;
  static AlignedFloats Make(int64_t n, bool zero = true);
  float* get() const { return ptr.get(); }
};

// Frees every buffer the free list keeps, so the process returns to its memory floor.
void ReleaseAlignedFloats();
// The bytes the free list keeps now (for tests and for a person watching memory).
size_t RetainedScratchBytes();

}  // namespace onnxflow
