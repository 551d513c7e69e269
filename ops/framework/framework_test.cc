#include <cstdint>
#include <limits>
#include <vector>

#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include "include/onnxflow/storage_arena.h"

#include "ops/framework/compare.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/framework/tensor_proto.h"
#include "ops/framework/testing.h"

namespace onnxflow {
namespace {

TEST(Shape, BroadcastsLikeNumpy) {
  auto s = BroadcastShapes({2, 1, 4}, {3, 1});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (Shape{2, 3, 4}));
  EXPECT_TRUE(Refused(BroadcastShapes({2, 3}, {4}), StatusCode::kInvalidArgument, "shapes [2,3] and [4] do not broadcast"));
}

TEST(Shape, CheckedCountRefusesOverflowAndNegatives) {
  EXPECT_TRUE(Refused(CheckedElementCount({-1, 2}), StatusCode::kInvalidArgument, "negative dimension in shape [-1,2]"));
  EXPECT_TRUE(Refused(CheckedElementCount({int64_t{1} << 40, int64_t{1} << 40}), StatusCode::kInvalidArgument, "shape [1099511627776,1099511627776] has too many elements"));
  EXPECT_EQ(*CheckedElementCount({0, int64_t{1} << 62}), 0);
  // Empty, but its strides would multiply the other dims past INT64_MAX.
  EXPECT_TRUE(Refused(CheckedElementCount({0, int64_t{1} << 40, int64_t{1} << 40}), StatusCode::kInvalidArgument, "shape [0,1099511627776,1099511627776] has too many elements"));
}

// Every item once, in chunks of grain/2 to grain items, and the chunks' plain (non-atomic) writes are
// seen by the caller after the call. Under --config=tsan this checks the hand-off annotations in
// tsan_annotations.h: without them TSan reports the caller's reads against the workers' writes.
TEST(Parallel, ChunksCoverTheRangeOnceAndTheCallerSeesTheirWrites) {
  tbb::task_arena arena(4);
  for (int round = 0; round < 20; ++round) {
    std::vector<int> hits(10000 + round, 0);
    std::vector<int64_t> sizes(hits.size(), 0);
    arena.execute([&] {
      ParallelChunks(static_cast<int64_t>(hits.size()), 64, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          ++hits[i];
          sizes[i] = end - begin;
        }
      });
    });
    for (size_t i = 0; i < hits.size(); ++i) {
      ASSERT_EQ(hits[i], 1) << "item " << i << ", round " << round;
      ASSERT_TRUE(sizes[i] >= 32 && sizes[i] <= 64) << sizes[i];  // simple_partitioner: halves past the grain
    }
  }
}

TEST(Parallel, TsanVisibleFunctorsCallThrough) {
  int calls = 0;
  auto f = MakeTsanVisible([&calls](int x) { ++calls; return 2 * x; });
  auto copy = f;
  auto moved = std::move(copy);
  EXPECT_EQ(f(3), 6);
  EXPECT_EQ(moved(4), 8);
  EXPECT_EQ(calls, 2);
}

TEST(Registry, RefusesOverlappingRanges) {
  KernelRegistry r;
  KernelFactory f = [](const KernelInfo&) -> Result<std::unique_ptr<OpKernel>> { return Internal("unused"); };
  ASSERT_TRUE(r.Register(kOnnxDomain, "Relu", 6, 13, f).ok());
  ASSERT_TRUE(r.Register(kOnnxDomain, "Relu", 14, kOpenEnded, f).ok());
  EXPECT_TRUE(Refused(r.Register("ai.onnx", "Relu", 13, 20, f), StatusCode::kInternal, "kernel for Relu [13, 20] overlaps one registered for [6, 13]"));
  EXPECT_EQ(r.Find(kOnnxDomain, "Relu", 5), nullptr);
  EXPECT_EQ(r.Find("ai.onnx", "Relu", 13)->since_version, 6);
  EXPECT_EQ(r.Find(kOnnxDomain, "Relu", 28)->since_version, 14);
}

TEST(Numeric, HalfRoundTripsAndRoundsToNearestEven) {
  for (float f : {0.0f, 1.0f, -2.5f, 65504.0f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(HalfToFloat(FloatToHalf(f)), f) << f;
  }
  EXPECT_EQ(FloatToHalf(1e6f), 0x7c00);
  EXPECT_EQ(HalfToFloat(FloatToHalf(1.0f + 1.0f / 4096)), 1.0f);  // tie to even
  EXPECT_TRUE(std::isnan(HalfToFloat(FloatToHalf(NAN))));
  EXPECT_EQ(BFloat16ToFloat(FloatToBFloat16(1.5f)), 1.5f);
}

// Freed storage goes back to the pool and comes out again: tensors of every small size (a shape
// of three int64 is 24 bytes, under the smallest class) made and dropped many times leave the pool
// holding what one round held, not one buffer per tensor.
TEST(TensorPool, SmallBuffersAreTakenBackFromThePool) {
  auto round = [] {
    std::vector<Tensor> held;
    for (int64_t n = 0; n <= 40; ++n) held.push_back(Tensor::Uninitialized(DataType::kInt64, {n % 9}));
  };
  round();
  const size_t after_one = PooledStorageBytes();
  for (int i = 0; i < 1000; ++i) round();
  EXPECT_LE(PooledStorageBytes(), after_one + 64 * 41) << "the pool grew with every round";
}

// A freed buffer serves a smaller request up to one power of two below its class (a model of
// many sizes otherwise kept a high-water mark per class: YOLOv8n 159 -> 139 MB peak), and no
// smaller: a 200 KB buffer does not go to a 4 KB tensor.
TEST(TensorPool, AFreedBufferServesSmallerSizesWithinTwice) {
  static_assert(200000 < kArenaMinBytes, "the pool's sizes, not the arena's");
  ReleasePooledStorage();
  { Tensor big = Tensor::Uninitialized(DataType::kFloat, {50000}); }  // 200 KB back to the pool
  const size_t held = PooledStorageBytes();
  ASSERT_GE(held, size_t{200000});
  { Tensor small = Tensor::Uninitialized(DataType::kFloat, {1000}); }  // 4 KB: a new buffer
  EXPECT_EQ(PooledStorageBytes(), held + 4096);
  Tensor smaller = Tensor::Uninitialized(DataType::kFloat, {28000});  // 112 KB: the 200 KB one
  EXPECT_EQ(PooledStorageBytes(), 4096u);
  ReleasePooledStorage();
}

// Tensors of kArenaMinBytes (256 KiB) and more share one arena: a freed 8 MB tensor's pages hold a
// 3 MB and a 4 MB one (size classes kept them apart, YOLOv8n held 45.6 MB of buffers for 19.2 MB
// of live tensors), and a release gives them back. Under AddressSanitizer they come from malloc.
TEST(TensorPool, BigTensorsShareFreedSpace) {
  ReleasePooledStorage();
  if (!kMapBigBuffers) {
    EXPECT_EQ(ProcessArena(), nullptr);
    return;
  }
  uintptr_t start = 0;
  {
    Tensor big = Tensor::Uninitialized(DataType::kFloat, {2000000});
    start = reinterpret_cast<uintptr_t>(big.data<float>());
  }
  EXPECT_GE(PooledStorageBytes(), size_t{8000000});
  Tensor a = Tensor::Uninitialized(DataType::kFloat, {750000});
  Tensor b = Tensor::Uninitialized(DataType::kUint8, {4000000});
  for (const void* p : {static_cast<const void*>(a.data<float>()), static_cast<const void*>(b.data<uint8_t>())}) {
    const uintptr_t at = reinterpret_cast<uintptr_t>(p);
    EXPECT_TRUE(at >= start && at < start + 8000000) << "not in the freed tensor's space";
  }
  EXPECT_LT(PooledStorageBytes(), size_t{1} << 20);
  ReleasePooledStorage();
}

// The arena's smallest tensor is its own, and one 64 bytes smaller is the size classes'.
TEST(TensorPool, TheArenaServesFromItsLowerBound) {
  StorageArena* arena = ProcessArena();
  if (arena == nullptr) GTEST_SKIP() << "no arena (AddressSanitizer): all storage is malloc's";
  const size_t before = arena->in_use();
  {
    Tensor at_bound = Tensor::Uninitialized(DataType::kUint8, {static_cast<int64_t>(kArenaMinBytes)});
    EXPECT_EQ(arena->in_use(), before + kArenaMinBytes);
  }
  Tensor under = Tensor::Uninitialized(DataType::kUint8, {static_cast<int64_t>(kArenaMinBytes - 64)});
  EXPECT_EQ(arena->in_use(), before);
}

TEST(TensorProto, RoundTripsPackedInt4) {
  Tensor t = Tensor::FromVector<Int4>({5}, {Int4{-8}, Int4{7}, Int4{-1}, Int4{0}, Int4{3}});
  onnx::TensorProto p;
  TensorToProto(t, &p);
  EXPECT_EQ(p.raw_data().size(), 3u);
  auto back = TensorFromProto(p);
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  for (int i = 0; i < 5; ++i) EXPECT_EQ(back->data<Int4>()[i].value, t.data<Int4>()[i].value);
}

TEST(TensorProto, RefusesDataShorterThanShape) {
  onnx::TensorProto p;
  p.set_data_type(1);
  p.add_dims(1000000000);
  p.add_float_data(1.0f);
  auto t = TensorFromProto(p);
  ASSERT_TRUE(Refused(t, StatusCode::kInvalidArgument, "tensor: its data holds fewer elements than its shape needs (1000000000)"));
  EXPECT_NE(t.status().message().find("fewer elements"), std::string::npos);
}

}  // namespace

constexpr float kInf = std::numeric_limits<float>::infinity();

// rtol * inf is infinite: a tolerance test alone would accept any value under an expected infinity.
TEST(Compare, AnInfinityMatchesOnlyTheSameInfinity) {
  const Tensor expected = Tensor::FromVector<float>({3}, {kInf, -kInf, kInf});
  EXPECT_FALSE(CompareTensors(expected, Tensor::FromVector<float>({3}, {1, 2, -5}), 1e-3, 1e-7).match);
  EXPECT_FALSE(CompareTensors(expected, Tensor::FromVector<float>({3}, {-kInf, -kInf, kInf}), 1e-3, 1e-7).match);
  EXPECT_FALSE(CompareTensors(expected, Tensor::FromVector<float>({3}, {kInf, -kInf, 3e38f}), 1e-3, 1e-7).match);
  EXPECT_TRUE(CompareTensors(expected, Tensor::FromVector<float>({3}, {kInf, -kInf, kInf}), 1e-3, 1e-7).match);
  // And the other direction: an infinity where a finite value is expected.
  const Tensor finite = Tensor::FromVector<float>({2}, {1, -1});
  EXPECT_FALSE(CompareTensors(finite, Tensor::FromVector<float>({2}, {kInf, -1}), 1e-3, 1e-7).match);
  EXPECT_FALSE(CompareTensors(finite, Tensor::FromVector<float>({2}, {1, -kInf}), 1e-3, 1e-7).match);
  const TensorComparison c = CompareTensors(expected, Tensor::FromVector<float>({3}, {kInf, 0, kInf}), 1e-3, 1e-7);
  EXPECT_EQ("element 1 is 0, expected -inf", c.mismatch);
  EXPECT_FALSE(TensorsNear(expected, Tensor::FromVector<float>({3}, {1, 2, -5})));
}

TEST(Compare, NaNMatchesOnlyNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(CompareTensors(Tensor::FromVector<float>({1}, {nan}), Tensor::FromVector<float>({1}, {nan}), 0, 0).match);
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<float>({1}, {nan}), Tensor::FromVector<float>({1}, {0}), 1, 1).match);
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<float>({1}, {0}), Tensor::FromVector<float>({1}, {nan}), 1, 1).match);
}

TEST(Compare, IntegersAreExactInTheirOwnType) {
  const TensorComparison off = CompareTensors(Tensor::FromVector<int64_t>({1}, {10000}),
                                              Tensor::FromVector<int64_t>({1}, {10009}), 1e-3, 1e-7);
  EXPECT_FALSE(off.match);
  EXPECT_EQ("element 0 is 10009, expected 10000", off.mismatch);
  EXPECT_EQ(9.0, off.max_abs_error);  // reported, though integers compare exactly
  // 2^53 + 1 and 2^53 are the same double.
  const int64_t big = int64_t{1} << 53;
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<int64_t>({1}, {big}), Tensor::FromVector<int64_t>({1}, {big + 1}),
                              1e-3, 1e-7).match);
  const uint64_t huge = std::numeric_limits<uint64_t>::max();
  const TensorComparison u = CompareTensors(Tensor::FromVector<uint64_t>({1}, {huge}),
                                            Tensor::FromVector<uint64_t>({1}, {huge - 1}), 1e-3, 1e-7);
  EXPECT_EQ("element 0 is 18446744073709551614, expected 18446744073709551615", u.mismatch);
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<int8_t>({2}, {-128, 5}), Tensor::FromVector<int8_t>({2}, {-127, 5}),
                              1e-2, 1).match);
  EXPECT_FALSE(CompareTensors(Tensor::FromVector<bool>({2}, {true, false}), Tensor::FromVector<bool>({2}, {true, true}),
                              1, 1).match);
  EXPECT_TRUE(CompareTensors(Tensor::FromVector<int32_t>({2}, {-7, 7}), Tensor::FromVector<int32_t>({2}, {-7, 7}), 0,
                             0).match);
}

TEST(Compare, FloatsWithinTolerance) {
  const Tensor e = Tensor::FromVector<float>({2}, {100, 0});
  EXPECT_TRUE(CompareTensors(e, Tensor::FromVector<float>({2}, {100.05f, 1e-8f}), 1e-3, 1e-7).match);
  EXPECT_FALSE(CompareTensors(e, Tensor::FromVector<float>({2}, {100.2f, 0}), 1e-3, 1e-7).match);
  EXPECT_FALSE(CompareTensors(e, Tensor::FromVector<double>({2}, {100, 0}), 1e-3, 1e-7).match);  // type
  EXPECT_FALSE(CompareTensors(e, Tensor::FromVector<float>({1, 2}, {100, 0}), 1e-3, 1e-7).match);  // shape
}

}  // namespace onnxflow
