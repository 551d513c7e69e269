// The GEMM reading a 16-bit A (GemmInputA::half) and writing a 16-bit C (GemmEpilogue::half_c):
// the same products as the float GEMM on the widened A, rounded once, on every compiled target,
// over row-widening and whole-widening A, several K and column blocks, and two threads; and the
// plan's bounds on the scratch that costs.
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

#include "ops/cast/half_simd.h"
#include "ops/framework/every_target.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/math/constant_b.h"
#include "ops/math/gemm.h"

namespace onnxflow {
namespace {

class GemmHalfTarget : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(GemmHalfTarget);

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

float Widened(uint16_t bits, bool bf16) { return bf16 ? BFloat16ToFloat(bits) : HalfToFloat(bits); }

struct HalfCase {
  int64_t m, n, k;
};

// C = gelu(A B + bias) with A, C or both in 16 bits against the float GEMM on the widened A: a
// 16-bit C holds the float product rounded once (one rounding step apart where the float kernels'
// sums differ in their last bit), and nothing past its N columns is written.
TEST_P(GemmHalfTarget, SixteenBitAAndCEqualTheFloatProduct) {
  const int64_t nr = GemmTile().nr;
  const HalfCase cases[] = {
      {19, 9 * nr + 5, 300},  // two K blocks, a partial last strip
      {70, 4 * nr, 600},      // three K blocks, rows over several strips
      {3, 2 * nr + 1, 50},    // fewer rows than a strip: A widened whole
      {1, 100, 64},           // one row
      {197, 32 * nr, 384},    // ViT-S's feed-forward product: C in narrow column blocks
      {5, 7, 0},              // no products: C = gelu(bias)
  };
  for (const DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    const bool bf16 = type == DataType::kBFloat16;
    for (const HalfCase& cs : cases) {
      const int64_t m = cs.m, n = cs.n, k = cs.k, lda = k + 3, ldc = n + 5;
      const SixteenBitValues a16 = RoundToSixteenBits(RandomFloats(m * lda, 1), type, {m, lda});
      const std::vector<float> b = RandomFloats(k * n, 2), bias = RandomFloats(n, 3);
      const SixteenBitValues b16 = RoundToSixteenBits(b, type, {k, n});
      const HalfPackedB half_b(b16.tensor, /*trans=*/false);
      for (const bool weights_half : {false, true}) {
        if (weights_half && k == 0) continue;
        for (int io = 1; io < 4; ++io) {  // bit 0: A in 16 bits, bit 1: C in 16 bits
          for (const int threads : {1, 2}) {
            const bool a_half = io & 1, c_half = io & 2;
            GemmEpilogue ep;
            ep.col_bias = bias.data();
            ep.activation = {Activation::kGelu};
            GemmInputB ib{nullptr, b.data(), n, false};
            if (weights_half) {
              ib = GemmInputB{};
              ib.source = &half_b;
            }
            std::vector<float> want(m * ldc), got(m * ldc, -7.0f);
            std::vector<uint16_t> got16(m * ldc, 0x7777);
            GemmInputA ia{nullptr, a16.widened.data(), lda, false, 1.0f};
            GemmInputA ia16 = ia;
            if (a_half) {
              ia16.data = nullptr;
              ia16.half = static_cast<const uint16_t*>(a16.tensor.raw_data());
              ia16.half_bf16 = bf16;
            }
            GemmEpilogue ep16 = ep;
            if (c_half) {
              ep16.half_c = got16.data();
              ep16.half_c_bf16 = bf16;
            }
            tbb::task_arena arena(threads);
            arena.execute([&] {
              Sgemm(m, n, k, ia, ib, want.data(), ldc, ep, threads);
              Sgemm(m, n, k, ia16, ib, c_half ? nullptr : got.data(), ldc, ep16, threads);
            });
            const float step = bf16 ? 1.0f / 128 : 1.0f / 1024;  // the 16-bit type's relative spacing
            for (int64_t i = 0; i < m; ++i) {
              for (int64_t j = 0; j < ldc; ++j) {
                const int64_t at = i * ldc + j;
                const std::string where = std::string(DataTypeName(type)) + " m=" + std::to_string(m) + " n=" +
                                          std::to_string(n) + " k=" + std::to_string(k) + " io=" +
                                          std::to_string(io) + " weights_half=" + std::to_string(weights_half) +
                                          " threads=" + std::to_string(threads) + " at " + std::to_string(i) + "," +
                                          std::to_string(j);
                if (j >= n) {  // past C's columns: untouched
                  if (c_half) ASSERT_EQ(got16[at], 0x7777) << where;
                  if (!c_half) ASSERT_EQ(got[at], -7.0f) << where;
                  continue;
                }
                if (!c_half) {
                  ASSERT_NEAR(got[at], want[at], 1e-5f * (1.0f + std::fabs(want[at]))) << where;
                  continue;
                }
                uint16_t rounded = 0;
                if (bf16) {
                  FloatToBFloat16Array(&want[at], &rounded, 1);
                } else {
                  FloatToHalfArray(&want[at], &rounded, 1);
                }
                if (got16[at] == rounded) continue;
                // The float sums may differ in their last bit, which can move a value across a
                // rounding edge: one step of the 16-bit type at most.
                ASSERT_NEAR(Widened(got16[at], bf16), want[at], step * (std::fabs(want[at]) + 1e-3f)) << where;
              }
            }
          }
        }
      }
    }
  }
}

GemmShape HalfShape(int64_t m, int64_t n, int64_t k, int threads, GemmShape::A a, GemmShape::B b, bool b_half,
                    bool c_half) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.threads = threads;
  s.a = a;
  s.b = b;
  s.b_half = b_half;
  s.c_half = c_half;
  s.tile = {8, 48};
  return s;
}

TEST(GemmHalfPlanTest, ScratchBoundedWithoutWideningWeightsTwice) {
  using A = GemmShape::A;
  using B = GemmShape::B;
  // A 16-bit A of a strip or more is widened by the tasks, row by row; fewer rows are widened whole.
  EXPECT_EQ(MakeGemmPlan(HalfShape(197, 384, 1536, 2, A::kHalfMatrix, B::kSource, true, false)).a,
            GemmPlan::APath::kWidenRows);
  EXPECT_EQ(MakeGemmPlan(HalfShape(3, 384, 1536, 2, A::kHalfMatrix, B::kSource, true, false)).a,
            GemmPlan::APath::kPackHere);
  // ViT-S's feed-forward product, A and C in 16 bits, on one core: the float tile of C (rows by
  // columns) within 32K floats by narrower column blocks, all 197 rows in one block so that the
  // 16-bit weights are widened once.
  const GemmPlan ffn = MakeGemmPlan(HalfShape(197, 1536, 384, 1, A::kHalfMatrix, B::kSource, true, true));
  EXPECT_EQ(ffn.m_blocks, 1);
  const int64_t cols = (ffn.n_strips + ffn.n_blocks - 1) / ffn.n_blocks * ffn.nr;
  EXPECT_LE(ffn.mc_strips * ffn.mr * cols, 32 << 10) << ffn.ToString();
  EXPECT_LE(ffn.mc_strips * ffn.mr * ffn.kc, 64 << 10) << ffn.ToString();
  // On two cores, column blocks in a multiple of two.
  EXPECT_EQ(MakeGemmPlan(HalfShape(197, 1536, 384, 2, A::kHalfMatrix, B::kSource, true, true)).n_blocks % 2, 0);
  // A tall A: rows bounded too.
  const GemmPlan tall = MakeGemmPlan(HalfShape(4096, 768, 768, 2, A::kHalfMatrix, B::kSource, true, true));
  EXPECT_LE(tall.mc_strips * tall.mr * tall.kc, 64 << 10) << tall.ToString();
  EXPECT_GT(tall.m_blocks, 1);
  // Several row blocks against 16-bit weights widen them block by block, never all at once (the
  // float copy they are kept in 16 bits to avoid); a float source is still unfolded once and shared.
  EXPECT_EQ(MakeGemmPlan(HalfShape(512, 49, 4608, 2, A::kPacked, B::kSource, true, false)).b,
            GemmPlan::BPath::kPackEachBlock);
  EXPECT_EQ(MakeGemmPlan(HalfShape(512, 49, 4608, 2, A::kPacked, B::kSource, false, false)).b,
            GemmPlan::BPath::kPackShared);
}

}  // namespace
}  // namespace onnxflow
