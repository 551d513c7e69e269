// AlignedFloats::FromArena (gemm_scratch.h): scratch of the process's arena at any size, which goes
// back to the arena, never to the free list.
#include "ops/math/gemm_scratch.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>

#include "include/onnxflow/storage_arena.h"

namespace onnxflow {
namespace {

TEST(GemmScratchTest, FromArenaTakesAndGivesBackArenaMemoryAtAnySize) {
  ReleaseAlignedFloats();
  StorageArena* arena = ProcessArena();
  if (arena == nullptr) GTEST_SKIP() << "no arena (AddressSanitizer): FromArena is malloc's";
  const size_t before = arena->in_use();
  // Three quarters of the size from which Make uses the arena.
  constexpr int64_t kFloats = static_cast<int64_t>(kArenaMinBytes / sizeof(float) * 3 / 4);
  {
    AlignedFloats u = AlignedFloats::FromArena(kFloats);
    ASSERT_NE(u.get(), nullptr);
    EXPECT_EQ(u.size, kFloats);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(u.get()) % 64, 0u);
    EXPECT_EQ(arena->in_use(), before + kFloats * sizeof(float));
    std::fill(u.get(), u.get() + kFloats, 1.5f);  // all of it is writable
    EXPECT_EQ(u.get()[kFloats - 1], 1.5f);
  }
  EXPECT_EQ(arena->in_use(), before);
  EXPECT_EQ(RetainedScratchBytes(), 0u) << "the free list must not keep an arena buffer";
  // Make, by contrast, keeps a buffer of that size in the free list.
  { AlignedFloats kept = AlignedFloats::Make(kFloats, false); }
  EXPECT_EQ(RetainedScratchBytes(), kFloats * sizeof(float));
  ReleaseAlignedFloats();
}

}  // namespace
}  // namespace onnxflow
