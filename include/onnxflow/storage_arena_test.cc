#include "include/onnxflow/storage_arena.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace onnxflow {
namespace {

constexpr size_t kMiB = size_t{1} << 20;

uintptr_t Addr(void* p) { return reinterpret_cast<uintptr_t>(p); }

// A freed block serves smaller requests from its own pages: what YOLOv8n's early 6.5 MB maps
// leave behind holds its later 1.6-3.3 MB ones, where size classes kept both.
TEST(StorageArena, AFreedBlockIsSplitForSmallerRequests) {
  StorageArena arena(2 * kMiB);
  void* big = arena.Take(8 * kMiB);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(Addr(big) % (2 * kMiB), 0u);
  EXPECT_EQ(arena.mapped(), 8 * kMiB);
  arena.Give(big);
  EXPECT_EQ(arena.retained(), 8 * kMiB);
  void* a = arena.Take(3 * kMiB);
  void* b = arena.Take(5 * kMiB - 100);  // rounded up to whole pages
  EXPECT_EQ(a, big);
  EXPECT_EQ(Addr(b), Addr(big) + 3 * kMiB);
  EXPECT_EQ(arena.mapped(), 8 * kMiB) << "a new mapping although the freed one held both";
  EXPECT_EQ(arena.retained(), 0u);
  EXPECT_EQ(arena.in_use(), 8 * kMiB);
  arena.Give(a);
  arena.Give(b);
}

// Neighbours given back merge, so a request as big as both fits where they were.
TEST(StorageArena, NeighboursMergeWhenFreed) {
  StorageArena arena(16 * kMiB);
  void* a = arena.Take(4 * kMiB);
  void* b = arena.Take(4 * kMiB);
  void* c = arena.Take(4 * kMiB);
  EXPECT_EQ(Addr(b), Addr(a) + 4 * kMiB);
  arena.Give(b);
  arena.Give(a);  // merges with b after it
  void* ab = arena.Take(8 * kMiB);
  EXPECT_EQ(ab, a);
  arena.Give(c);
  arena.Give(ab);  // merges with what is before and after it: the whole mapping again
  EXPECT_EQ(arena.Take(16 * kMiB), a);
  EXPECT_EQ(arena.mapped(), 16 * kMiB);
}

// The smallest free block that holds a request serves it, not the first.
TEST(StorageArena, TheSmallestFreeBlockThatFitsIsTaken) {
  StorageArena arena(32 * kMiB);
  void* a = arena.Take(6 * kMiB);
  void* sep1 = arena.Take(kMiB);
  void* b = arena.Take(2 * kMiB);
  void* sep2 = arena.Take(kMiB);
  arena.Give(a);
  arena.Give(b);
  EXPECT_EQ(arena.Take(2 * kMiB), b);
  EXPECT_EQ(arena.Take(3 * kMiB), a);
  (void)sep1;
  (void)sep2;
}

// A request goes where pages were used before (resident already) rather than to never-used space,
// even where that space fits it more tightly; among used blocks, the smallest that fits.
TEST(StorageArena, UsedPagesServeBeforeNeverUsedOnes) {
  StorageArena arena(16 * kMiB);
  void* used = arena.Take(5 * kMiB);
  void* live = arena.Take(8 * kMiB);  // leaves 3 MiB never used at the end of the mapping
  arena.Give(used);
  EXPECT_EQ(arena.retained(), 5 * kMiB);
  void* a = arena.Take(3 * kMiB);
  EXPECT_EQ(a, used) << "went to the never-used 3 MiB";
  EXPECT_EQ(arena.retained(), 2 * kMiB);
  void* b = arena.Take(3 * kMiB);  // 2 used MiB are left: only the never-used space holds it
  EXPECT_EQ(Addr(b), Addr(live) + 8 * kMiB);
  arena.Give(a);
  arena.Give(b);
  arena.Give(live);
}

// Release hands free memory back: the free end of the usable range goes back to the reservation,
// free pages before it are dropped; what is in use keeps its contents.
TEST(StorageArena, ReleaseReturnsFreeMemoryAndKeepsLiveBlocks) {
  StorageArena arena(8 * kMiB);
  void* kept = arena.Take(3 * kMiB);
  void* freed = arena.Take(3 * kMiB);
  void* rest = arena.Take(2 * kMiB);  // the first growth is full
  void* own = arena.Take(20 * kMiB);  // a growth of its own size, the free end once given back
  std::memset(kept, 0x5a, 3 * kMiB);
  std::memset(freed, 0x11, 3 * kMiB);
  arena.Give(freed);
  arena.Give(own);
  EXPECT_EQ(arena.retained(), 23 * kMiB);
  EXPECT_EQ(arena.mapped(), 28 * kMiB);
  arena.Release();
  EXPECT_EQ(arena.retained(), 0u);
  EXPECT_EQ(arena.mapped(), 8 * kMiB);
  const unsigned char* k = static_cast<const unsigned char*>(kept);
  for (size_t i = 0; i < 3 * kMiB; i += 4093) ASSERT_EQ(k[i], 0x5a) << i;
  void* again = arena.Take(3 * kMiB);
  EXPECT_EQ(again, freed);
  EXPECT_EQ(static_cast<unsigned char*>(again)[12345], 0) << "released pages come back zeroed";
  arena.Give(again);
  arena.Give(kept);
  arena.Give(rest);
}

// What counts as retained is what was used: a freed block merged into never-used space counts its
// own bytes, and what a request takes of it stops counting.
TEST(StorageArena, RetainedCountsUsedBytesOnly) {
  StorageArena arena(16 * kMiB);
  void* a = arena.Take(4 * kMiB);
  arena.Give(a);  // merges with the 12 MiB never used
  EXPECT_EQ(arena.retained(), 4 * kMiB);
  void* b = arena.Take(3 * kMiB);
  EXPECT_EQ(b, a);
  EXPECT_EQ(arena.retained(), kMiB);
  void* c = arena.Take(2 * kMiB);
  EXPECT_EQ(arena.retained(), 0u);
  void* d = arena.Take(kMiB);
  arena.Give(c);  // a used block between two in use
  arena.Give(b);  // merges with c
  EXPECT_EQ(arena.retained(), 5 * kMiB);
  arena.Give(d);  // merges with both and the unused tail: 6 MiB were used
  EXPECT_EQ(arena.retained(), 6 * kMiB);
  arena.Release();
  EXPECT_EQ(arena.retained(), 0u);
  EXPECT_EQ(arena.mapped(), 0u);
}

// The arena grows in one piece of address space: what two growths hold merges when freed, and a
// request bigger than the free end extends it. (In mappings of their own, 8 + 8 MiB freed did not
// hold 16, and a third mapping was made.)
TEST(StorageArena, GrowthsAreNeighboursAndMerge) {
  StorageArena arena(8 * kMiB);
  void* a = arena.Take(8 * kMiB);
  void* b = arena.Take(8 * kMiB);
  EXPECT_EQ(Addr(b), Addr(a) + 8 * kMiB);
  arena.Give(a);
  arena.Give(b);
  void* ab = arena.Take(16 * kMiB);
  EXPECT_EQ(ab, a);
  EXPECT_EQ(arena.mapped(), 16 * kMiB);
  void* c = arena.Take(20 * kMiB);  // extends the usable part by 20 MiB, not 8
  EXPECT_EQ(Addr(c), Addr(a) + 16 * kMiB);
  EXPECT_EQ(arena.mapped(), 36 * kMiB);
  arena.Give(ab);
  void* d = arena.Take(14 * kMiB);  // best fit: the 16 MiB freed, not new space
  EXPECT_EQ(d, a);
  void* e = arena.Take(6 * kMiB);   // 2 MiB free at the start do not hold it: the end grows by 8
  EXPECT_EQ(Addr(e), Addr(a) + 36 * kMiB);
  EXPECT_EQ(arena.mapped(), 44 * kMiB);
  std::memset(e, 0x3c, 6 * kMiB);
  arena.Give(c);
  arena.Give(e);
  arena.Release();  // the free end, from d's end on, is given back; d stays usable and intact
  EXPECT_EQ(arena.mapped(), 14 * kMiB);
  std::memset(d, 0x7e, 14 * kMiB);
  void* f = arena.Take(4 * kMiB);   // grows again where the released end was, zeroed
  EXPECT_EQ(Addr(f), Addr(a) + 14 * kMiB);
  EXPECT_EQ(static_cast<unsigned char*>(f)[kMiB], 0);
  arena.Give(f);
  arena.Give(d);
  arena.Release();
  EXPECT_EQ(arena.mapped(), 0u);
}

// Under an address-space limit the arena reserves a quarter of it at most, and a request past what
// the limit leaves is refused with null (the executor's "out of memory" naming the node), never an
// abort. In a child: the limit is the child's own. (Not under AddressSanitizer, kMapBigBuffers
// false: its shadow memory needs more address space than any such limit.)
TEST(StorageArena, AnAddressSpaceLimitIsRefusedNotAborted) {
  if (!kMapBigBuffers) GTEST_SKIP() << "AddressSanitizer cannot run under an address-space limit";
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    long vm_kb = 0;
    std::ifstream status("/proc/self/status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("VmSize:", 0) == 0) vm_kb = std::stol(line.substr(7));
    }
    const rlimit limit{static_cast<rlim_t>(vm_kb) * 1024 + 256 * kMiB, static_cast<rlim_t>(vm_kb) * 1024 + 256 * kMiB};
    if (vm_kb == 0 || setrlimit(RLIMIT_AS, &limit) != 0) _exit(2);
    StorageArena arena(8 * kMiB);
    void* a = arena.Take(32 * kMiB);  // from the reservation
    if (a == nullptr) _exit(3);
    std::memset(a, 1, 32 * kMiB);
    if (arena.Take(512 * kMiB) != nullptr) _exit(4);  // past the limit: refused
    void* b = arena.Take(16 * kMiB);  // and the arena still serves what fits, in its reserved range
    if (b == nullptr) _exit(5);
    if (Addr(b) != Addr(a) + 32 * kMiB) _exit(6);
    arena.Give(a);
    arena.Give(b);
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died (signal " << (WIFSIGNALED(status) ? WTERMSIG(status) : 0) << ")";
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no limit set, 3: 32 MiB refused, 4: 512 MiB served, 5: 16 MiB refused after, "
                                     "6: no range reserved within the limit";
}

TEST(StorageArena, ImpossibleSizesAreRefusedNotWrapped) {
  StorageArena arena(2 * kMiB);
  EXPECT_EQ(arena.Take(SIZE_MAX), nullptr);
  EXPECT_EQ(arena.Take(SIZE_MAX - 4095), nullptr);
  EXPECT_EQ(arena.mapped(), 0u);
}

// Live blocks never overlap, whatever the order of takes and gives, from several threads at once:
// each block is filled with its own byte and checked before it is given back.
TEST(StorageArena, LiveBlocksNeverOverlap) {
  StorageArena arena(16 * kMiB);
  auto worker = [&arena](unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<std::pair<unsigned char*, size_t>> live;
    for (int step = 0; step < 400; ++step) {
      if (live.size() < 6 && (live.empty() || rng() % 2 == 0)) {
        const size_t bytes = kMiB + rng() % (5 * kMiB);
        auto* p = static_cast<unsigned char*>(arena.Take(bytes));
        ASSERT_NE(p, nullptr);
        std::memset(p, static_cast<int>(seed * 7 + step), bytes);
        live.push_back({p, bytes});
      } else {
        const size_t i = rng() % live.size();
        const auto [p, bytes] = live[i];
        const unsigned char want = p[0];
        for (size_t j = 0; j < bytes; j += 997) ASSERT_EQ(p[j], want) << "overwritten by another block";
        ASSERT_EQ(p[bytes - 1], want);
        arena.Give(p);
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
      }
    }
    for (auto [p, bytes] : live) arena.Give(p);
  };
  std::vector<std::thread> threads;
  for (unsigned t = 1; t <= 4; ++t) threads.emplace_back(worker, t);
  for (auto& t : threads) t.join();
  EXPECT_EQ(arena.in_use(), 0u);
  arena.Release();
  EXPECT_EQ(arena.mapped(), 0u) << "every mapping is free again: all should merge and unmap";
}

}  // namespace
}  // namespace onnxflow
