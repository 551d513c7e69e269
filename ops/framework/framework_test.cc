#include <vector>

#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/framework/tensor_proto.h"

namespace onnxflow {
namespace {

TEST(Shape, BroadcastsLikeNumpy) {
  auto s = BroadcastShapes({2, 1, 4}, {3, 1});
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(*s, (Shape{2, 3, 4}));
  EXPECT_FALSE(BroadcastShapes({2, 3}, {4}).ok());
}

TEST(Shape, CheckedCountRefusesOverflowAndNegatives) {
  EXPECT_FALSE(CheckedElementCount({-1, 2}).ok());
  EXPECT_FALSE(CheckedElementCount({int64_t{1} << 40, int64_t{1} << 40}).ok());
  EXPECT_EQ(*CheckedElementCount({0, int64_t{1} << 62}), 0);
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
  ASSERT_TRUE(r.Register("", "Relu", 6, 13, f).ok());
  ASSERT_TRUE(r.Register("", "Relu", 14, kOpenEnded, f).ok());
  EXPECT_FALSE(r.Register("ai.onnx", "Relu", 13, 20, f).ok());
  EXPECT_EQ(r.Find("", "Relu", 5), nullptr);
  EXPECT_EQ(r.Find("ai.onnx", "Relu", 13)->since_version, 6);
  EXPECT_EQ(r.Find("", "Relu", 28)->since_version, 14);
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
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("fewer elements"), std::string::npos);
}

}  // namespace
}  // namespace onnxflow
