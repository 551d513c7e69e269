#include "include/onnxflow/storage_arena.h"

#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <iterator>

namespace onnxflow {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kHugePage = size_t{2} << 20;
// Past any machine's memory (and far from overflowing the rounding below).
constexpr size_t kMaxBytes = size_t{1} << 48;

size_t RoundUpTo(size_t bytes, size_t to) { return (bytes + to - 1) / to * to; }

// Growths of 32 MiB: the activations of most models' runs fit in one (YOLOv8n at 640 x 640
// needs 24 MB of it), and the part never used is never resident.
constexpr size_t kChunkBytes = size_t{32} << 20;
// The address space reserved: at most 64 GiB, twice the machine's memory, and a quarter of the
// process's address-space limit if it has one (the rest stays for everything else it maps).
constexpr size_t kMaxReserveBytes = size_t{64} << 30;

// Maps `bytes` (a multiple of 2 MiB) 2 MiB-aligned with `protection`; 0 on failure. mmap aligns to
// pages only: map a huge page more and trim both ends to 2 MiB boundaries.
uintptr_t MapAligned(size_t bytes, int protection) {
  void* region = mmap(nullptr, bytes + kHugePage, protection, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (region == MAP_FAILED) return 0;
  const uintptr_t start = reinterpret_cast<uintptr_t>(region);
  const uintptr_t aligned = RoundUpTo(start, kHugePage);
  if (aligned > start) munmap(region, aligned - start);
  const uintptr_t end = start + bytes + kHugePage;
  if (end > aligned + bytes) munmap(reinterpret_cast<void*>(aligned + bytes), end - (aligned + bytes));
  return aligned;
}

}  // namespace

StorageArena* ProcessArena() {
  if (!kMapBigBuffers) return nullptr;
  static StorageArena* arena = new StorageArena(kChunkBytes);
  return arena;
}

StorageArena::StorageArena(size_t chunk_bytes) : chunk_bytes_(RoundUpTo(chunk_bytes, kHugePage)) {}

StorageArena::~StorageArena() {
  for (const auto& [start, chunk] : chunks_) {
    munmap(reinterpret_cast<void*>(start), start == reserve_ ? reserve_bytes_ : chunk.bytes);
  }
}

void* StorageArena::Take(size_t bytes) {
  if (bytes > kMaxBytes) return nullptr;
  const size_t size = RoundUpTo(std::max<size_t>(bytes, 1), kPage);
  std::lock_guard<std::mutex> lock(mutex_);
  const Blocks::iterator fit = FreeBlockFor(size);
  const Blocks::iterator it = fit != blocks_.end() ? fit : NewChunk(size);
  if (it == blocks_.end()) return nullptr;
  Unfree(it);
  Block& block = it->second;
  if (block.size > size) {  // the rest stays free, first in line for the next request that fits
    Block rest{block.size - size, block.chunk, false};
    if (block.dirty_end > size) {
      rest.dirty_begin = std::max(block.dirty_begin, size) - size;
      rest.dirty_end = block.dirty_end - size;
    }
    block.size = size;
    MarkFree(blocks_.emplace(it->first + size, rest).first);
  }
  block.dirty_begin = block.dirty_end = 0;
  in_use_ += size;
  if (size >= kHugePage) AdviseHugePages(it->first, size, block.chunk);
  return reinterpret_cast<void*>(it->first);
}

void StorageArena::Give(void* p) {
  std::lock_guard<std::mutex> lock(mutex_);
  Blocks::iterator it = blocks_.find(reinterpret_cast<uintptr_t>(p));
  if (it == blocks_.end() || it->second.free) std::abort();  // not ours, or given twice: as free() would
  in_use_ -= it->second.size;
  it->second.dirty_begin = 0;
  it->second.dirty_end = it->second.size;
  MarkFree(it);
  MergeNext(it);
  if (it != blocks_.begin()) MergeNext(std::prev(it));
}

void StorageArena::Release() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (Blocks::iterator it = blocks_.begin(); it != blocks_.end();) {
    Block& block = it->second;
    if (!block.free) {
      ++it;
    } else if (block.chunk == reserve_ && it->first + block.size == reserve_ + chunks_.at(reserve_).bytes) {
      // The reserved range's free end: dropped and reserved again, no longer usable.
      Unfree(it);
      madvise(reinterpret_cast<void*>(it->first), block.size, MADV_DONTNEED);
      mprotect(reinterpret_cast<void*>(it->first), block.size, PROT_NONE);
      Chunk& reserve = chunks_.at(reserve_);
      reserve.bytes -= block.size;
      std::fill(reserve.huge.begin() + static_cast<std::ptrdiff_t>(reserve.bytes / kHugePage), reserve.huge.end(), false);
      mapped_ -= block.size;
      it = blocks_.erase(it);
    } else if (it->first == block.chunk && block.size == chunks_.at(block.chunk).bytes) {  // a whole mapping
      Unfree(it);
      munmap(reinterpret_cast<void*>(it->first), block.size);
      mapped_ -= block.size;
      chunks_.erase(block.chunk);
      it = blocks_.erase(it);
    } else {
      if (block.dirty() > 0) {
        Unfree(it);
        madvise(reinterpret_cast<void*>(it->first + block.dirty_begin), block.dirty(), MADV_DONTNEED);
        block.dirty_begin = block.dirty_end = 0;
        MarkFree(it);
      }
      ++it;
    }
  }
}

size_t StorageArena::retained() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return retained_;
}

size_t StorageArena::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_use_;
}

size_t StorageArena::mapped() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return mapped_;
}

// A page used once stays resident until Release; a page never used costs nothing until a request
// writes it. So of the free blocks that hold a request, the one whose used pages it covers most
// serves it, and the smallest of those: the smallest alone sent requests to never-used space while
// used blocks a little bigger sat free, and at two threads, where runs free their tensors in
// another order, YOLOv8n float16 spread its 26 MB of live buffers over the whole 32 MiB mapping.
StorageArena::Blocks::iterator StorageArena::FreeBlockFor(size_t size) {
  Blocks::iterator best = blocks_.end();
  size_t best_fresh = SIZE_MAX;
  for (auto f = free_.lower_bound({size, 0}); f != free_.end() && best_fresh > 0; ++f) {
    const Blocks::iterator it = blocks_.find(f->second);
    const Block& block = it->second;
    const size_t covered = std::min(block.dirty_end, size);  // the request takes [0, size)
    const size_t fresh = size - (covered > block.dirty_begin ? covered - block.dirty_begin : 0);
    if (fresh < best_fresh) {
      best = it;
      best_fresh = fresh;
    }
  }
  return best;
}

StorageArena::Blocks::iterator StorageArena::NewChunk(size_t bytes) {
  if (const Blocks::iterator grown = GrowReserve(bytes); grown != blocks_.end()) return grown;
  const size_t size = RoundUpTo(std::max(bytes, chunk_bytes_), kHugePage);
  const uintptr_t aligned = MapAligned(size, PROT_READ | PROT_WRITE);
  if (aligned == 0) return blocks_.end();
  chunks_.emplace(aligned, Chunk{size, std::vector<bool>(size / kHugePage, false)});
  mapped_ += size;
  const Blocks::iterator it = blocks_.emplace(aligned, Block{size, aligned, false}).first;
  MarkFree(it);
  return it;
}

void StorageArena::Reserve() {
  reserve_tried_ = true;
  size_t bytes = kMaxReserveBytes;
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page > 0) bytes = std::min(bytes, 2 * static_cast<size_t>(pages) * static_cast<size_t>(page));
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) bytes = std::min<size_t>(bytes, limit.rlim_cur / 4);
  bytes = bytes / kHugePage * kHugePage;
  if (bytes < 2 * chunk_bytes_) return;
  const uintptr_t start = MapAligned(bytes, PROT_NONE);
  if (start == 0) return;
  reserve_ = start;
  reserve_bytes_ = bytes;
  chunks_.emplace(reserve_, Chunk{0, std::vector<bool>(bytes / kHugePage, false)});
}

StorageArena::Blocks::iterator StorageArena::GrowReserve(size_t size) {
  if (!reserve_tried_) Reserve();
  if (reserve_ == 0) return blocks_.end();
  Chunk& reserve = chunks_.at(reserve_);
  const uintptr_t usable_end = reserve_ + reserve.bytes;
  // The free block the usable part ends with, if any: it holds less than `size` (FreeBlockFor
  // found no block that holds it), and the new part only has to hold the rest.
  Blocks::iterator last = blocks_.end();
  if (reserve.bytes > 0) {
    last = std::prev(blocks_.lower_bound(usable_end));
    if (!last->second.free) last = blocks_.end();
  }
  const size_t tail = last != blocks_.end() ? last->second.size : 0;
  const size_t grow = RoundUpTo(std::max(size - std::min(size, tail), chunk_bytes_), kHugePage);
  if (grow > reserve_bytes_ - reserve.bytes) return blocks_.end();
  // (mprotect fails or succeeds whole; a MAP_FIXED mapping that failed could leave a hole in the
  // range for another mapping to take.)
  if (mprotect(reinterpret_cast<void*>(usable_end), grow, PROT_READ | PROT_WRITE) != 0) return blocks_.end();
  reserve.bytes += grow;
  mapped_ += grow;
  const Blocks::iterator it = blocks_.emplace(usable_end, Block{grow, reserve_, false}).first;
  MarkFree(it);
  if (last == blocks_.end()) return it;
  MergeNext(last);
  return last;
}

// Streamed over 4 KiB pages, a big buffer misses the TLB on every page and the prefetcher restarts
// at each: packed weights and big tensors want huge pages (ISNet's 134 MB tensors, 2.9-3.4 s a run
// without them, 1.3 s with). Asked for per block, not per mapping: a whole mapping on huge pages
// rounded each model's used part up to 2 MiB pages, 2-5 MB more resident (ResNet-50, YOLOv8n,
// Inception v1, a dynamic-int8 BERT).
void StorageArena::AdviseHugePages(uintptr_t start, size_t size, uintptr_t chunk) {
  std::vector<bool>& huge = chunks_.at(chunk).huge;
  const size_t first = (RoundUpTo(start, kHugePage) - chunk) / kHugePage;
  const size_t end = (start + size - chunk) / kHugePage;
  for (size_t page = first; page < end;) {
    if (huge[page]) {
      ++page;
      continue;
    }
    size_t run = page;
    while (run < end && !huge[run]) huge[run++] = true;
    madvise(reinterpret_cast<void*>(chunk + page * kHugePage), (run - page) * kHugePage, MADV_HUGEPAGE);
    page = run;
  }
}

void StorageArena::MarkFree(Blocks::iterator it) {
  it->second.free = true;
  free_.emplace(it->second.size, it->first);
  retained_ += it->second.dirty();
}

void StorageArena::Unfree(Blocks::iterator it) {
  free_.erase({it->second.size, it->first});
  retained_ -= it->second.dirty();
  it->second.free = false;
}

void StorageArena::MergeNext(Blocks::iterator it) {
  const Blocks::iterator next = std::next(it);
  if (!it->second.free || next == blocks_.end() || !next->second.free || next->second.chunk != it->second.chunk) return;
  Unfree(it);
  Unfree(next);
  Block& block = it->second;
  const Block& after = next->second;
  if (after.dirty() > 0) {  // the union of both dirty ranges, `after`'s moved past `block`
    if (block.dirty() == 0) block.dirty_begin = block.size + after.dirty_begin;
    block.dirty_end = block.size + after.dirty_end;
  }
  block.size += after.size;
  blocks_.erase(next);
  MarkFree(it);
}

}  // namespace onnxflow
