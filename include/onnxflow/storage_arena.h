// Where big buffers live: one best-fit arena over large mappings, its free space split and merged,
// so the memory a run holds follows the bytes its live buffers need, not the sizes they came in.
// Tensor storage (include/onnxflow/tensor.cc) and kernels' scratch (ops/math/gemm_scratch.cc)
// share it, so a convolution's scratch fits in the space tensors freed. Internal to the runtime.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace onnxflow {

class StorageArena {
 public:
  // The arena grows `chunk_bytes` or more at a time (a multiple of 2 MiB), 2 MiB-aligned, at the end
  // of one range of address space it reserves when first used (no memory, no commit charge: a
  // PROT_NONE mapping), so all its blocks are neighbours and merge: a buffer bigger than any
  // mapping made so far takes the free end and extends it, where separate mappings left each
  // earlier one's free space beside it unusable (ISNet at 1024 x 1024, whose 64-128 MB maps came in
  // mappings of their own: 547 -> 513 MB peak RSS in float16, 719 -> 686 MB in float). Past the
  // reserved range, or without one, each growth is a mapping of its own. What is never handed out
  // is never touched, so never resident. The whole 2 MiB pages inside a block of 2 MiB or more
  // are asked for as transparent huge pages when it is first handed out.
  explicit StorageArena(size_t chunk_bytes);
  ~StorageArena();
  StorageArena(const StorageArena&) = delete;
  StorageArena& operator=(const StorageArena&) = delete;

  // `bytes` (rounded up to 4 KiB pages, page-aligned) from a free block that holds them (the one
  // where they reuse the most pages used before, then the smallest), or a new mapping; null when
  // the system has no memory left.
  void* Take(size_t bytes);
  // A pointer Take returned, whole.
  void Give(void* p);
  // Free blocks go back to the system: whole mappings unmapped, the reserved range's free end given
  // back to it, the rest of the free pages dropped.
  void Release();

  // Bytes of free blocks that were used since they were last released (resident, most likely; a
  // never-used gap between two such parts of one free block counts too).
  size_t retained() const;
  // Bytes handed out and not given back.
  size_t in_use() const;
  // Bytes mapped for use (resident or not; of the reserved range, its usable part).
  size_t mapped() const;

 private:
  struct Block {
    size_t size;
    uintptr_t chunk;  // the mapping it is in: blocks of two mappings never merge
    bool free;
    // Of a free block, the bytes [dirty_begin, dirty_end) from its start hold every page used
    // since the last Release (none when equal).
    size_t dirty_begin = 0, dirty_end = 0;
    size_t dirty() const { return dirty_end - dirty_begin; }
  };
  using Blocks = std::map<uintptr_t, Block>;

  struct Chunk {
    size_t bytes;
    std::vector<bool> huge;  // per 2 MiB page: asked for as a huge page already
  };

  // The free block that serves a request of `size` bytes (a multiple of the page), or end().
  Blocks::iterator FreeBlockFor(size_t size);
  Blocks::iterator NewChunk(size_t bytes);
  // Makes the reserved range usable further (reserving it first) for a request of `size`: the new
  // part merges with a free block at the usable end; end() when the range cannot hold it.
  Blocks::iterator GrowReserve(size_t size);
  void Reserve();
  // Asks for huge pages on the whole 2 MiB pages of [start, start + size) not asked for yet.
  void AdviseHugePages(uintptr_t start, size_t size, uintptr_t chunk);
  void MarkFree(Blocks::iterator it);
  void Unfree(Blocks::iterator it);
  // Merges `it` with the free block right after it in the same mapping, if any.
  void MergeNext(Blocks::iterator it);

  const size_t chunk_bytes_;
  mutable std::mutex mutex_;
  Blocks blocks_;                                // every block, by address
  std::set<std::pair<size_t, uintptr_t>> free_;  // free blocks by size, then address: best fit
  std::map<uintptr_t, Chunk> chunks_;            // mappings, by start
  size_t retained_ = 0, in_use_ = 0, mapped_ = 0;
  // The reserved range: its start (0 without one) and length; its Chunk in chunks_ counts the usable
  // bytes from the start.
  uintptr_t reserve_ = 0;
  size_t reserve_bytes_ = 0;
  bool reserve_tried_ = false;
};

// AddressSanitizer checks malloc's blocks only: under it every buffer comes from malloc, so
// overruns of the big ones are still found; otherwise big buffers are mapped memory.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kMapBigBuffers = false;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
inline constexpr bool kMapBigBuffers = false;
#else
inline constexpr bool kMapBigBuffers = true;
#endif
#else
inline constexpr bool kMapBigBuffers = true;
#endif

// Buffers of kArenaMinBytes to kArenaMaxBytes come from the process's arena. Smaller ones stay
// with malloc and the size-class pools, which recycle them without a lock held across sizes;
// bigger ones are mapped alone and unmapped when freed. From 256 KiB, not 1 MiB: the pools keep a
// high-water mark per size class, and a CNN's mid-sized activations and weights (YOLOv8n at 640:
// 80x80 and 40x40 maps, 256-768 KB) held 9.5 MB there. Peak RSS (medians of 5, 1 | 2 threads):
// YOLOv8n 85.8 | 82.2 -> 76.4 | 76.3 MB, its float16 form 53.9 | 57.3 -> 47.2 | 55.0, ViT-S/16
// 106.7 -> 105.5; run time unchanged at one thread (medians of 7 alternated rounds: YOLOv8n 37.9
// -> 37.2 ms, ResNet-50 36.1 -> 36.9, BERT-base 132 -> 127, a loaded machine). 64 KiB was no
// better on the float16 models (48.7 | 53.5) and puts ten times the blocks under the arena's lock.
inline constexpr size_t kArenaMinBytes = size_t{256} << 10;
inline constexpr size_t kArenaMaxBytes = size_t{256} << 20;

// The process's arena (never destroyed: buffers may outlive main()), or null without
// kMapBigBuffers.
StorageArena* ProcessArena();

// ProcessArena() when `bytes` is its to serve, else null.
inline StorageArena* ArenaFor(size_t bytes) {
  return bytes >= kArenaMinBytes && bytes <= kArenaMaxBytes ? ProcessArena() : nullptr;
}

}  // namespace onnxflow
