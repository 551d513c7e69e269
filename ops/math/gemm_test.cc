// The SIMD GEMM against the plain triple loop, over odd sizes, transposes, packed and raw
// operands, misaligned pointers, every epilogue, 16-bit A and C, and two threads.
#include "ops/math/gemm.h"
#include "ops/cast/half_simd.h"
#include "ops/framework/every_target.h"
#include "ops/framework/numeric.h"
#include "ops/framework/testing.h"
#include "ops/math/constant_b.h"
#include "ops/math/fused_activation.h"
#include "include/onnxflow/storage_arena.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include <gtest/gtest.h>
#include <oneapi/tbb/task_arena.h>

namespace onnxflow {
namespace {

// The tests below that name this fixture run once per compiled CPU target, each with its own tile shape.
class GemmTarget : public EveryTargetTest {};
ONNXFLOW_INSTANTIATE_EVERY_TARGET(GemmTarget);

std::vector<float> RandomFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

struct Case {
  int64_t m, n, k;
  bool trans_a, trans_b;
  bool pack_a, pack_b;
  float alpha;
  int threads;
};

// Runs one case and compares; `offset` shifts every pointer off its allocation's alignment.
void Check(const Case& cs, const GemmEpilogue& epilogue, int offset = 1) {
  const int64_t lda = (cs.trans_a ? cs.m : cs.k) + 3;
  const int64_t ldb = (cs.trans_b ? cs.k : cs.n) + 5;
  const int64_t ldc = cs.n + 2;
  const int64_t a_rows = cs.trans_a ? cs.k : cs.m;
  const int64_t b_rows = cs.trans_b ? cs.n : cs.k;
  std::vector<float> a = RandomFloats(a_rows * lda + offset, 1);
  std::vector<float> b = RandomFloats(b_rows * ldb + offset, 2);
  std::vector<float> c0 = RandomFloats(cs.m * ldc + offset, 3);
  std::vector<float> expected = c0, actual = c0;
  SgemmReference(cs.m, cs.n, cs.k, a.data() + offset, lda, cs.trans_a, b.data() + offset, ldb, cs.trans_b,
                 cs.alpha, expected.data() + offset, ldc, epilogue);
  PackedA pa;
  PackedB pb;
  GemmInputA ia;
  GemmInputB ib;
  if (cs.pack_a) {
    pa = PackA(a.data() + offset, lda, cs.trans_a, cs.m, cs.k, cs.alpha);
    ia.packed = &pa;
  } else {
    ia.data = a.data() + offset;
    ia.ld = lda;
    ia.trans = cs.trans_a;
    ia.scale = cs.alpha;
  }
  if (cs.pack_b) {
    pb = PackB(b.data() + offset, ldb, cs.trans_b, cs.k, cs.n);
    ib.packed = &pb;
  } else {
    ib.data = b.data() + offset;
    ib.ld = ldb;
    ib.trans = cs.trans_b;
  }
  tbb::task_arena arena(cs.threads);
  arena.execute([&] { Sgemm(cs.m, cs.n, cs.k, ia, ib, actual.data() + offset, ldc, epilogue, cs.threads); });
  for (int64_t i = 0; i < cs.m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float e = expected[offset + i * ldc + j], g = actual[offset + i * ldc + j];
      const float tol = 1e-4f * (1.0f + std::sqrt(static_cast<float>(cs.k))) + 1e-4f * std::fabs(e);
      ASSERT_NEAR(e, g, tol) << "m=" << cs.m << " n=" << cs.n << " k=" << cs.k << " ta=" << cs.trans_a
                             << " tb=" << cs.trans_b << " pa=" << cs.pack_a << " pb=" << cs.pack_b
                             << " at (" << i << "," << j << ")";
    }
  }
  // Padding columns past n must be untouched.
}

TEST(GemmTest, OddSizesAllLayouts) {
  const int64_t sizes[][3] = {{1, 1, 1},   {1, 17, 3},  {3, 1, 17},  {7, 47, 5},   {9, 49, 33},
                              {17, 96, 64}, {33, 100, 257}, {8, 48, 256}, {65, 3, 513}, {1, 1000, 20},
                              {10, 50, 70}, {12, 54, 9},  {5, 196, 40}};  // narrow last strips: 2, 6, 4 columns
  for (const auto& s : sizes) {
    for (int ta = 0; ta < 2; ++ta) {
      for (int tb = 0; tb < 2; ++tb) {
        for (int pack = 0; pack < 4; ++pack) {
          Case cs{s[0], s[1], s[2], ta == 1, tb == 1, (pack & 1) != 0, (pack & 2) != 0, 1.0f, 1};
          Check(cs, GemmEpilogue{});
        }
      }
    }
  }
}

TEST(GemmTest, AlphaAccumulateBiasesActivations) {
  const int64_t m = 19, n = 53, k = 300;
  std::vector<float> row_bias = RandomFloats(m, 7), col_bias = RandomFloats(n, 8);
  std::vector<float> addend = RandomFloats(m * (n + 2), 9);  // Check's ldc is n + 2
  const ActivationSpec acts[] = {{Activation::kNone},
                                 {Activation::kRelu},
                                 {Activation::kSwish},
                                 {Activation::kLeakyRelu, 0.1f},
                                 {Activation::kClip, -0.5f, 0.25f},
                                 {Activation::kSigmoid},
                                 {Activation::kTanh},
                                 {Activation::kHardSigmoid, 0.2f, 0.5f},
                                 {Activation::kHardSwish},
                                 {Activation::kGelu}};
  for (const ActivationSpec& act : acts) {
    for (int flags = 0; flags < 16; ++flags) {
      GemmEpilogue ep;
      ep.accumulate = (flags & 1) != 0;
      ep.addend = (flags & 8) ? addend.data() : nullptr;  // ignored when accumulating
      ep.row_bias = (flags & 2) ? row_bias.data() : nullptr;
      ep.col_bias = (flags & 4) ? col_bias.data() : nullptr;
      ep.activation = act;
      Check(Case{m, n, k, false, false, false, false, 0.5f, 1}, ep);
      Check(Case{m, n, k, true, true, true, true, 1.0f, 1}, ep);
    }
  }
}

TEST(GemmTest, TwoThreads) {
  std::vector<float> row_bias = RandomFloats(300, 7);
  GemmEpilogue ep;
  ep.row_bias = row_bias.data();
  ep.activation.kind = Activation::kRelu;
  Check(Case{300, 257, 129, false, false, false, false, 1.0f, 2}, ep);
  Check(Case{1, 1500, 300, false, true, false, false, 1.0f, 2}, ep);
  Check(Case{130, 20, 1100, true, false, true, true, 2.0f, 2}, ep);
}

// Products of a few columns read A in place (no packing): 64 and 49 columns (a strip and a part,
// a strip and one column), 96 and 280, and 700 and 1000 (in place on two threads only), with biases,
// activation, K over several blocks, on 1 and 2 threads; alpha and a transposed A still pack.
TEST(GemmTest, NarrowProductsReadAInPlace) {
  std::vector<float> row_bias = RandomFloats(300, 8), col_bias = RandomFloats(1000, 9);
  GemmEpilogue ep;
  ep.row_bias = row_bias.data();
  ep.col_bias = col_bias.data();
  ep.activation.kind = Activation::kLeakyRelu;
  ep.activation.alpha = 0.1f;
  for (int threads : {1, 2}) {
    for (int64_t n : {64, 49, 96, 280, 700, 1000}) {
      Check(Case{300, n, 600, false, false, false, false, 1.0f, threads}, ep);
      Check(Case{300, n, 600, false, false, false, true, 1.0f, threads}, ep);
    }
    Check(Case{300, 49, 600, false, false, false, false, 0.5f, threads}, ep);
    Check(Case{300, 49, 600, true, false, false, false, 1.0f, threads}, ep);
  }
}

TEST_P(GemmTarget, ProductsAndActivations) {
  std::vector<float> row_bias = RandomFloats(40, 7), col_bias = RandomFloats(70, 8);
  GemmEpilogue ep;
  ep.row_bias = row_bias.data();
  ep.col_bias = col_bias.data();
  ep.activation = {Activation::kTanh};
  Check(Case{37, 67, 300, false, false, false, false, 1.0f, 1}, ep);
  Check(Case{13, 29, 5, true, true, true, true, 0.5f, 1}, GemmEpilogue{});
  Check(Case{3, 70, 17, false, false, false, false, 1.0f, 1}, GemmEpilogue{});
  for (const Activation kind : {Activation::kSigmoid, Activation::kSwish}) {
    std::vector<float> x = RandomFloats(37, 9), y = x;
    ApplyActivation({kind}, y.data(), 37);
    for (int i = 0; i < 37; ++i) ASSERT_NEAR(ActivationScalar({kind}, x[i]), y[i], 2e-6f);
  }
}

// A NaN reaching a fused Relu, Clip or HardSigmoid stays NaN, in the product's epilogue (Relu's
// inline path and the general one) and on its own, on every target: ONNX Runtime keeps it, and
// an fp16 overflow's inf times a zero weight must not come out as 0 or as the clip bound.
TEST_P(GemmTarget, FusedClampsKeepNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const ActivationSpec acts[] = {{Activation::kRelu}, {Activation::kClip, -1.0f, 2.0f}, {Activation::kHardSigmoid, 0.2f, 0.5f}};
  for (const ActivationSpec& act : acts) {
    // A (3 x 2) times B (2 x 20): row 1 reads inf * 0, so its every column is NaN.
    std::vector<float> a = {1, 2, inf, 0, -3, 1}, b(40, 0.0f), c(60, 7.0f);
    for (int j = 0; j < 20; ++j) b[20 + j] = (j % 3) - 1.0f;  // B's first row is 0
    GemmEpilogue ep;
    ep.activation = act;
    GemmInputA ga;
    ga.data = a.data();
    ga.ld = 2;
    GemmInputB gb{nullptr, b.data(), 20, false};
    Sgemm(3, 20, 2, ga, gb, c.data(), 20, ep, 1);
    for (int j = 0; j < 20; ++j) {
      EXPECT_TRUE(std::isnan(c[20 + j])) << static_cast<int>(act.kind) << " column " << j << ": " << c[20 + j];
      for (int r : {0, 2}) {
        const float want = ActivationScalar(act, a[r * 2] * b[j] + a[r * 2 + 1] * b[20 + j]);
        EXPECT_NEAR(c[r * 20 + j], want, 1e-5f) << static_cast<int>(act.kind) << " row " << r << " column " << j;
      }
    }
    std::vector<float> x = {nan, -nan, 3.0f, -3.0f};
    ApplyActivation(act, x.data(), 4);
    EXPECT_TRUE(std::isnan(x[0]) && std::isnan(x[1])) << static_cast<int>(act.kind);
    EXPECT_TRUE(std::isnan(ActivationScalar(act, nan))) << static_cast<int>(act.kind);
  }
}

// One row of C takes the row tile (several B strips side by side): M = 1 and a last strip of one
// row (M = 9, 17), with whole-strip groups, leftovers of 1 to 8 strips (one tile each), a
// partial and a raw B's tail strip, K over two blocks, every epilogue input; and the same bits as
// the row computed inside a full tile.
TEST_P(GemmTarget, RowTileProducts) {
  const int64_t nr = GemmTile().nr;
  std::vector<float> row_bias = RandomFloats(20, 7), col_bias = RandomFloats(12 * nr, 8);
  std::vector<float> addend = RandomFloats(20 * (12 * nr + 2), 9);
  for (const int64_t m : {1, 9, 17}) {
    for (const int64_t n : {4 * nr, 4 * nr + 5, 9 * nr, 5 * nr - 3, nr, 6 * nr, 7 * nr + 1}) {
      for (int flags = 0; flags < 8; ++flags) {
        GemmEpilogue ep;
        ep.accumulate = (flags & 1) != 0;
        ep.addend = (flags & 2) ? addend.data() : nullptr;
        ep.row_bias = (flags & 4) ? row_bias.data() : nullptr;
        ep.col_bias = col_bias.data();
        ep.activation = {Activation::kGelu};
        for (int pack = 0; pack < 2; ++pack) Check(Case{m, n, 300, false, false, false, pack == 1, 1.0f, 1}, ep);
      }
    }
  }
  for (const int64_t strips : {9, 10, 11, 12, 13, 14, 15, 16, 17}) {
    const int64_t n = strips * nr, k = 300;
    const std::vector<float> a = RandomFloats(8 * k, 3), b = RandomFloats(k * n, 4);
    std::vector<float> tile(8 * n), row(n);
    const PackedB pb = PackB(b.data(), n, false, k, n);
    GemmInputB ib{&pb};
    Sgemm(8, n, k, GemmInputA{nullptr, a.data(), k, false, 1.0f}, ib, tile.data(), n, GemmEpilogue{}, 1);
    Sgemm(1, n, k, GemmInputA{nullptr, a.data(), k, false, 1.0f}, ib, row.data(), n, GemmEpilogue{}, 1);
    for (int64_t j = 0; j < n; ++j) ASSERT_EQ(row[j], tile[j]) << strips << " strips, column " << j;
  }
}

// A half model's one-row product (a decoder's per-token step) reads its float16 or bfloat16 weight
// strips as they are, widened in registers (BPanelSource::HalfStrips): the float GEMM's result on the
// widened weights over whole groups of strips, single strips and a partial last one, K blocks,
// every epilogue, one and two threads (the same bits but where the float GEMM takes a few
// columns down its narrow AVX-512 kernel, another order of the same sums); and no block is widened
// into scratch (PackBlock), which a product of more rows still does, a few strips at a time (the
// pieces of a block, each reporting its rows to block_done once).
class CountingSource : public BPanelSource {
 public:
  explicit CountingSource(const HalfPackedB& half) : half_(half) {}
  void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const override {
    ++blocks;
    half_.PackBlock(k0, kc, j0, cols, nr, dst);
  }
  const uint16_t* HalfStrips(int64_t nr, bool* bfloat16) const override { return half_.HalfStrips(nr, bfloat16); }
  mutable std::atomic<int> blocks{0};

 private:
  const HalfPackedB& half_;
};

TEST_P(GemmTarget, HalfWeightRowsEqualTheirWidenedProduct) {
  const int64_t nr = GemmTile().nr;
  for (const DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    for (const int64_t k : {300, 3000}) {
      for (const int64_t n : {4 * nr, 9 * nr + 5, 5 * nr - 3, nr, int64_t{3}}) {
        const std::vector<float> a = RandomFloats(19 * k, 1), b = RandomFloats(k * n, 2);
        const std::vector<float> bias = RandomFloats(n, 3);
        const SixteenBitValues b16 = RoundToSixteenBits(b, type, {k, n});
        const HalfPackedB half(b16.tensor, /*trans=*/false);
        const PackedB full = PackB(b16.widened.data(), n, false, k, n);
        for (int flags = 0; flags < 4; ++flags) {
          for (int threads : {1, 2}) {
            for (int64_t m : {1, 2, 19}) {
              const std::vector<float> addend_m = RandomFloats(m * n, 4);
              GemmEpilogue ep;
              ep.addend = (flags & 1) ? addend_m.data() : nullptr;
              ep.col_bias = (flags & 2) ? bias.data() : nullptr;
              ep.activation = {flags == 3 ? Activation::kGelu : Activation::kNone};
              const CountingSource source(half);
              GemmInputB from_half;
              from_half.source = &source;
              std::vector<float> got(m * n, -7.0f), want(m * n, -9.0f);
              std::vector<std::atomic<int>> done(static_cast<size_t>(m * n));
              GemmEpilogue counted = ep;
              counted.block_done = [&](int64_t r0, int64_t rows, int64_t c0, int64_t cols) {
                for (int64_t r = r0; r < r0 + rows; ++r) {
                  for (int64_t c = c0; c < c0 + cols; ++c) ++done[r * n + c];
                }
              };
              tbb::task_arena arena(threads);
              arena.execute([&] {
                Sgemm(m, n, k, GemmInputA{nullptr, a.data(), k, false, 1.0f}, from_half, got.data(), n, counted,
                      threads);
                Sgemm(m, n, k, GemmInputA{nullptr, a.data(), k, false, 1.0f}, GemmInputB{&full}, want.data(), n, ep,
                      threads);
              });
              for (int64_t i = 0; i < m * n; ++i) ASSERT_EQ(done[i].load(), 1) << "m=" << m << " n=" << n << " at " << i;
              for (int64_t i = 0; i < m * n; ++i) {
                ASSERT_NEAR(got[i], want[i], 1e-5f * (1.0f + std::fabs(want[i])))
                    << DataTypeName(type) << " m=" << m << " n=" << n << " k=" << k << " flags=" << flags
                    << " threads=" << threads << " at " << i;
              }
              if (m == 1) EXPECT_EQ(source.blocks.load(), 0) << "n=" << n << " k=" << k;
              if (m > 1) EXPECT_GT(source.blocks.load(), 0) << "n=" << n << " k=" << k;
            }
          }
        }
      }
    }
  }
}

// The GEMM reading a 16-bit A (GemmInputA::half) and writing a 16-bit C (GemmEpilogue::half_c): the
// same products as the float GEMM on the widened A, rounded once, over row-widening and
// whole-widening A, several K and column blocks, and two threads.
float Widened(uint16_t bits, bool bf16) { return bf16 ? BFloat16ToFloat(bits) : HalfToFloat(bits); }

struct HalfCase {
  int64_t m, n, k;
};

// C = gelu(A B + bias) with A, C or both in 16 bits against the float GEMM on the widened A: a
// 16-bit C holds the float product rounded once (one rounding step apart where the float kernels'
// sums differ in their last bit), and nothing past its N columns is written.
TEST_P(GemmTarget, SixteenBitAAndCEqualTheFloatProduct) {
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

// The packed A strips, element for element: kk * mr + r inside strip s holds A(s * mr + r, kk) times
// the scale, zeros past M; rows and columns around every block of the in-register transpose.
TEST_P(GemmTarget, PackAPlacesEveryElement) {
  for (const bool trans : {false, true}) {
    for (const float scale : {1.0f, -0.375f}) {
      for (const int64_t m : {1, 3, 4, 5, 6, 8, 9, 13, 16, 17}) {
        for (const int64_t k : {1, 3, 4, 5, 8, 17, 64}) {
          const int64_t ld = (trans ? m : k) + 3;
          const std::vector<float> a = RandomFloats((trans ? k : m) * ld + 1, 11);
          const float* base = a.data() + 1;  // off the allocation's alignment
          const PackedA p = PackA(base, ld, trans, m, k, scale);
          ASSERT_EQ(p.mr, GemmTile().mr);
          for (int64_t s = 0; s < p.strips(); ++s) {
            for (int64_t kk = 0; kk < k; ++kk) {
              for (int64_t r = 0; r < p.mr; ++r) {
                const int64_t i = s * p.mr + r;
                const float want = i < m ? (trans ? base[kk * ld + i] : base[i * ld + kk]) * scale : 0.0f;
                ASSERT_EQ(p.data.get()[s * p.strip_size() + kk * p.mr + r], want)
                    << "trans=" << trans << " scale=" << scale << " m=" << m << " k=" << k << " row " << i << " col " << kk;
              }
            }
          }
        }
      }
    }
  }
}

// A transposed B's strips, element for element: strip t holds op(B)(kk, t * nr + j) at kk * nr + j,
// zeros past N (the in-register transpose's blocks and the rows and columns around them).
TEST_P(GemmTarget, PackBTransposedPlacesEveryElement) {
  for (const int64_t n : {1, 3, 4, 5, 13, 48, 53, 100}) {
    for (const int64_t k : {1, 3, 4, 7, 64}) {
      const int64_t ld = k + 3;  // op(B) = B^T: B is n x k
      const std::vector<float> b = RandomFloats(n * ld + 1, 12);
      const float* base = b.data() + 1;
      const PackedB p = PackB(base, ld, /*trans=*/true, k, n);
      for (int64_t t = 0; t < p.strips(); ++t) {
        for (int64_t kk = 0; kk < k; ++kk) {
          for (int64_t j = 0; j < p.nr; ++j) {
            const int64_t col = t * p.nr + j;
            const float want = col < n ? base[col * ld + kk] : 0.0f;
            ASSERT_EQ(p.data.get()[t * p.strip_size() + kk * p.nr + j], want) << "n=" << n << " k=" << k << " col " << col;
          }
        }
      }
    }
  }
}

TEST(GemmTest, EmptyDepthAppliesEpilogue) {
  std::vector<float> c(6, 2.0f), bias = {1, 2};
  GemmEpilogue ep;
  ep.accumulate = true;
  ep.row_bias = bias.data();
  GemmInputA a;
  GemmInputB b;
  Sgemm(2, 3, 0, a, b, c.data(), 3, ep, 1);
  EXPECT_EQ(c, (std::vector<float>{3, 3, 3, 4, 4, 4}));
}

TEST(GemmTest, ActivationVectorMatchesScalar) {
  std::vector<float> x = RandomFloats(1037, 4);
  for (float& v : x) v *= 8.0f;
  const ActivationSpec acts[] = {{Activation::kLeakyRelu, 0.1f}, {Activation::kSigmoid}, {Activation::kTanh},
                                 {Activation::kHardSigmoid, 0.2f, 0.5f}, {Activation::kClip, -1.0f, 2.0f},
                                 {Activation::kSwish}, {Activation::kGelu}, {Activation::kHardSwish}};
  for (const ActivationSpec& act : acts) {
    for (int64_t n : {1, 3, 17, 1000}) {
      std::vector<float> y(x.begin() + 1, x.begin() + 1 + n);
      ApplyActivation(act, y.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(ActivationScalar(act, x[1 + i]), y[i], 2e-6f);
    }
  }
}

// Swish's epilogue estimates the sigmoid (activate-inl.h): within 1e-6 of x / (1 + e^-x) computed
// in double over the whole float range where the result is not negligible, 0 beyond, NaN kept.
TEST(GemmTest, SwishEstimateAcrossTheRange) {
  std::vector<float> x;
  for (float v = -120.0f; v <= 120.0f; v += 0.37f) x.push_back(v);
  x.push_back(std::numeric_limits<float>::infinity());
  x.push_back(std::numeric_limits<float>::quiet_NaN());
  std::vector<float> y = x;
  ApplyActivation({Activation::kSwish}, y.data(), static_cast<int64_t>(y.size()));
  for (size_t i = 0; i < x.size(); ++i) {
    const double want = static_cast<double>(x[i]) / (1.0 + std::exp(-static_cast<double>(x[i])));
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
    } else if (std::isinf(x[i])) {
      EXPECT_EQ(y[i], x[i]);
    } else {
      EXPECT_NEAR(y[i], want, 1e-6 * std::fabs(want) + 1e-30) << "x = " << x[i];
    }
  }
}

// The epilogue's activations are named, and defaulted, by the one vocabulary (activation.h).
TEST(GemmTest, EpilogueActivationByName) {
  EXPECT_EQ(FusedActivationSpec::Named("")->activation.kind, Activation::kNone);
  EXPECT_EQ(FusedActivationSpec::Named("LeakyRelu")->activation.alpha, 0.01f);
  EXPECT_EQ(FusedActivationSpec::Named("HardSigmoid")->activation.beta, 0.5f);
  EXPECT_EQ(FusedActivationSpec::Named("Gelu")->activation.kind, Activation::kGelu);
  EXPECT_EQ(ToActOp(Activation::kClip), ActOp::kClip);
  EXPECT_TRUE(Refused(FusedActivationSpec::Named("Mish"), StatusCode::kInvalidArgument, "unknown fused activation 'Mish'"));
}

// B handed over by a source: rows stored out of order with gaps (row k at offsets[k]), either
// packed block by block or, when the source offers it, read in place.
class ScatteredRows : public BPanelSource {
 public:
  ScatteredRows(const std::vector<float>& b, int64_t k, int64_t n, bool in_place) : in_place_(in_place) {
    for (int64_t r = 0; r < k; ++r) offsets_.push_back((k - 1 - r) * (n + 5) + 3);
    store_.assign(k * (n + 5) + 3 + 64, 0.0f);  // a vector's slack past the last row
    for (int64_t r = 0; r < k; ++r) std::copy(b.begin() + r * n, b.begin() + (r + 1) * n, store_.begin() + offsets_[r]);
  }
  void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const override {
    for (int64_t t = 0; t * nr < cols; ++t) {
      for (int64_t r = 0; r < kc; ++r) {
        for (int64_t j = 0; j < nr; ++j) {
          const int64_t col = t * nr + j;
          dst[(t * kc + r) * nr + j] = col < cols ? store_[offsets_[k0 + r] + j0 + col] : 0.0f;
        }
      }
    }
  }
  const float* InPlaceRows(const int64_t** offsets) const override {
    *offsets = in_place_ ? offsets_.data() : nullptr;
    return in_place_ ? store_.data() : nullptr;
  }

 private:
  bool in_place_;
  std::vector<int64_t> offsets_;
  std::vector<float> store_;
};

TEST(GemmTest, SourcesPackedAndInPlace) {
  // {1, 300, 300} and {9, 250, 40}: rows of one take the row tile over B blocks packed from the
  // source (a half model's per-token MatMul).
  const int64_t sizes[][3] = {{1, 1, 1},   {9, 49, 33},  {19, 53, 300}, {64, 200, 70},
                              {17, 5, 600}, {1, 300, 300}, {9, 250, 40}};
  for (const auto& s : sizes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    const std::vector<float> a = RandomFloats(m * k, 1), b = RandomFloats(k * n, 2), bias = RandomFloats(m, 3);
    std::vector<float> want(m * n);
    GemmEpilogue ep;
    ep.row_bias = bias.data();
    ep.activation.kind = Activation::kRelu;
    SgemmReference(m, n, k, a.data(), k, false, b.data(), n, false, 1.0f, want.data(), n, ep);
    for (bool in_place : {false, true}) {
      for (int threads : {1, 2}) {
        const ScatteredRows source(b, k, n, in_place);
        GemmInputA ia;
        ia.data = a.data();
        ia.ld = k;
        GemmInputB ib;
        ib.source = &source;
        std::vector<float> got(m * n, -7.0f);
        tbb::task_arena arena(threads);
        arena.execute([&] { Sgemm(m, n, k, ia, ib, got.data(), n, ep, threads); });
        for (int64_t i = 0; i < m * n; ++i) {
          ASSERT_NEAR(want[i], got[i], 1e-4f * (1.0f + std::fabs(want[i])))
              << "m=" << m << " n=" << n << " k=" << k << " in_place=" << in_place << " threads=" << threads << " at " << i;
        }
      }
    }
  }
}

// A gathered in place: element (i, k) at base[rows[i] + cols[k]], the offsets scattered so that
// no two rows or k share a layout; on every target, one and two threads, with a packed B, the
// column bias and activation of a convolution with output channels in the lanes, and block_done
// called once for every element of C.
TEST_P(GemmTarget, GatheredA) {
  const int64_t sizes[][3] = {{1, 1, 1}, {9, 49, 33}, {19, 53, 300}, {200, 64, 70}, {17, 5, 600}};
  for (const auto& s : sizes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    std::vector<int64_t> rows(m), cols(k);
    for (int64_t i = 0; i < m; ++i) rows[i] = (i * 7) % m * (k + 3);
    for (int64_t kk = 0; kk < k; ++kk) cols[kk] = (kk * 5) % k;
    const std::vector<float> base = RandomFloats(m * (k + 3), 1), b = RandomFloats(k * n, 2);
    const std::vector<float> bias = RandomFloats(n, 3);
    std::vector<float> a(m * k);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t kk = 0; kk < k; ++kk) a[i * k + kk] = base[rows[i] + cols[kk]];
    }
    GemmEpilogue ep;
    ep.col_bias = bias.data();
    ep.activation.kind = Activation::kRelu;
    std::vector<float> want(m * n);
    SgemmReference(m, n, k, a.data(), k, false, b.data(), n, false, 1.0f, want.data(), n, ep);
    const PackedB packed = PackB(b.data(), n, false, k, n);
    // With a block_done the blocks walk A strips outside; without, small row blocks walk B strips
    // outside (GemmPlan::b_outer).
    for (const bool report_rows : {true, false}) {
      for (const int threads : {1, 2}) {
        GemmInputA ia;
        ia.gather_base = base.data();
        ia.gather_rows = rows.data();
        ia.gather_cols = cols.data();
        GemmInputB ib;
        ib.packed = &packed;
        std::vector<float> got(m * n, -7.0f);
        std::vector<std::atomic<int>> done(m * n);
        ep.block_done = nullptr;
        if (report_rows) {
          ep.block_done = [&](int64_t r0, int64_t nr, int64_t c0, int64_t nc) {
            for (int64_t i = r0; i < r0 + nr; ++i) {
              for (int64_t j = c0; j < c0 + nc; ++j) done[i * n + j]++;
            }
          };
        }
        tbb::task_arena arena(threads);
        arena.execute([&] { Sgemm(m, n, k, ia, ib, got.data(), n, ep, threads); });
        for (int64_t i = 0; i < m * n; ++i) {
          ASSERT_NEAR(want[i], got[i], 1e-4f * (1.0f + std::fabs(want[i])))
              << "m=" << m << " n=" << n << " k=" << k << " threads=" << threads << " at " << i;
          if (report_rows) ASSERT_EQ(done[i].load(), 1) << "block_done coverage at " << i;
        }
      }
    }
  }
}

// The plan for a few shapes is what the rules in gemm_plan.cc say (an 8 x 48 tile, AVX-512's; B
// blocks of half a 1 MiB L2, whatever this machine's L2: on a 512 KiB one the big square's N went in
// 6 blocks, not 4).
GemmShape PlanShape(int64_t m, int64_t n, int64_t k, int threads, GemmShape::A a, GemmShape::B b) {
  GemmShape s;
  s.l2_block_floats = (1 << 20) / 2 / static_cast<int64_t>(sizeof(float));
  s.m = m;
  s.n = n;
  s.k = k;
  s.threads = threads;
  s.a = a;
  s.b = b;
  s.tile = {8, 48};
  return s;
}

TEST(GemmPlanTest, FollowsTheRules) {
  using A = GemmShape::A;
  using B = GemmShape::B;
  // A big square product on two cores: K in 4 blocks of 256; the 22 strips of N in 4 blocks (two
  // tasks per core, N split first); A packed here (tall A: packing pays).
  GemmPlan big = MakeGemmPlan(PlanShape(1024, 1024, 1024, 2, A::kMatrix, B::kPacked));
  EXPECT_EQ(big.threads, 2);
  EXPECT_EQ(big.a, GemmPlan::APath::kPackHere);
  EXPECT_EQ(big.b, GemmPlan::BPath::kPacked);
  EXPECT_EQ(big.k_blocks, 4);
  EXPECT_EQ(big.kc, 256);
  EXPECT_EQ(big.n_strips, 22);
  EXPECT_EQ(big.n_blocks, 4);
  EXPECT_EQ(big.m_blocks, 1);
  EXPECT_EQ(big.mc_strips, 128);
  EXPECT_EQ(big.tasks(), 4);
  // One row: B read in place with its partial last strip packed (4096 = 85 x 48 + 16).
  GemmPlan row = MakeGemmPlan(PlanShape(1, 4096, 4096, 2, A::kMatrix, B::kMatrix));
  EXPECT_EQ(row.b, GemmPlan::BPath::kRaw);
  EXPECT_TRUE(row.b_tail);
  EXPECT_EQ(row.a, GemmPlan::APath::kPackHere);  // fewer rows than a strip
  // Too small to wake a second core; A's rows read in place.
  GemmPlan small = MakeGemmPlan(PlanShape(16, 16, 16, 2, A::kMatrix, B::kMatrix));
  EXPECT_EQ(small.threads, 1);
  EXPECT_EQ(small.a, GemmPlan::APath::kInPlace);
  EXPECT_EQ(small.tasks(), 1);
  EXPECT_EQ(small.kc, 16);
  // A convolution's unfolded image too narrow to split (7x7 output): M split in 4 blocks, so B is
  // unfolded once and shared by the tasks.
  GemmPlan conv = MakeGemmPlan(PlanShape(512, 49, 4608, 2, A::kPacked, B::kSource));
  EXPECT_EQ(conv.b, GemmPlan::BPath::kPackShared);
  EXPECT_EQ(conv.m_blocks, 4);
  EXPECT_EQ(conv.n_blocks, 1);
  EXPECT_EQ(conv.k_blocks, 18);
  // Against a source packed block by block (a half model's weights, widened a few strips at a
  // time) A's rows are read in place as against a matrix; against a source read in place (an
  // image's rows) A is packed: the two in-place kernels are separate.
  EXPECT_EQ(MakeGemmPlan(PlanShape(197, 384, 1536, 2, A::kMatrix, B::kSource)).a, GemmPlan::APath::kInPlace);
  EXPECT_EQ(MakeGemmPlan(PlanShape(197, 384, 1536, 1, A::kMatrix, B::kSource)).a, GemmPlan::APath::kInPlace);
  EXPECT_EQ(MakeGemmPlan(PlanShape(197, 384, 1536, 1, A::kMatrix, B::kMatrix)).a, GemmPlan::APath::kPackHere);
  EXPECT_EQ(MakeGemmPlan(PlanShape(197, 384, 1536, 2, A::kMatrix, B::kSourceInPlace)).a,
            GemmPlan::APath::kPackHere);
  // Weights packed at load: a few rows of A (32 x 256 floats per K block, far under a quarter of
  // any L2) walk B strips outside; the tall A above keeps A strips outside, and so does B packed
  // per call (it is in cache).
  EXPECT_TRUE(MakeGemmPlan(PlanShape(32, 768, 768, 1, A::kMatrix, B::kPacked)).b_outer);
  EXPECT_FALSE(big.b_outer);
  EXPECT_FALSE(MakeGemmPlan(PlanShape(32, 768, 768, 1, A::kMatrix, B::kMatrix)).b_outer);
  EXPECT_FALSE(MakeGemmPlan(PlanShape(1, 768, 768, 1, A::kMatrix, B::kPacked)).b_outer);  // one strip
  // One row against weights packed at load (a decoder's step): one block of columns per core, so
  // the row tile reads 8 strips side by side (two per core were 4 strips each at N 768).
  GemmPlan step = MakeGemmPlan(PlanShape(1, 768, 3072, 2, A::kMatrix, B::kPacked));
  EXPECT_EQ(step.n_strips, 16);
  EXPECT_EQ(step.n_blocks, 2);
  EXPECT_EQ(step.tasks(), 2);
  EXPECT_EQ(MakeGemmPlan(PlanShape(1, 768, 3072, 1, A::kMatrix, B::kPacked)).tasks(), 1);
  // Nothing to multiply.
  EXPECT_TRUE(MakeGemmPlan(PlanShape(4, 4, 0, 1, A::kMatrix, B::kMatrix)).no_products);
  EXPECT_EQ(big.ToString(),
            "GemmPlan M=1024 N=1024 K=1024 tile=8x48 threads=2/2 A=pack-here B=packed K=4x256 M=128 strips in 1 "
            "blocks of 128 N=22 strips in 4 blocks, 4 tasks");
}

// PlanShape with a 16-bit source B (b_half) and a 16-bit C (c_half).
GemmShape HalfShape(int64_t m, int64_t n, int64_t k, int threads, GemmShape::A a, GemmShape::B b, bool b_half,
                    bool c_half) {
  GemmShape s = PlanShape(m, n, k, threads, a, b);
  s.b_half = b_half;
  s.c_half = c_half;
  return s;
}

TEST(GemmPlanTest, HalfScratchBoundedWithoutWideningWeightsTwice) {
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


// A plan made ahead runs the same product as Sgemm planning it.
TEST(GemmPlanTest, PlannedAheadMatches) {
  const int64_t m = 37, n = 67, k = 300;
  std::vector<float> a = RandomFloats(m * k, 1), b = RandomFloats(k * n, 2), c1(m * n), c2(m * n);
  const GemmInputA ia{nullptr, a.data(), k};
  const GemmInputB ib{nullptr, b.data(), n};
  tbb::task_arena arena(2);
  arena.execute([&] {
    Sgemm(m, n, k, ia, ib, c1.data(), n, GemmEpilogue{}, 2);
    const GemmPlan plan = MakeGemmPlan(GemmShapeOf(m, n, k, ia, ib, 2));
    Sgemm(plan, ia, ib, c2.data(), n, GemmEpilogue{});
  });
  EXPECT_EQ(c1, c2);
}

// The scratch free list keeps freed buffers (under kArenaMinBytes; bigger ones are the arena's) for
// the next call, never more than its cap, and gives everything back on ReleaseAlignedFloats.
TEST(GemmScratchTest, BoundedAndReleased) {
  ReleaseAlignedFloats();
  const int64_t floats = static_cast<int64_t>(kArenaMinBytes / sizeof(float) / 2);
  for (int round = 0; round < 3; ++round) {
    std::vector<AlignedFloats> held;
    for (int64_t i = 0; i < 100; ++i) held.push_back(AlignedFloats::Make(floats + i * 256, false));
  }
  EXPECT_GT(RetainedScratchBytes(), 0u);
  EXPECT_LE(RetainedScratchBytes(), kMaxRetainedScratchBytes);
  ReleaseAlignedFloats();
  EXPECT_EQ(RetainedScratchBytes(), 0u);
}

// A kept buffer taken for a smaller request goes back with its own size: the free list once
// recorded the request's, so what it counted against its cap fell short of what it held.
TEST(GemmScratchTest, ABufferGoesBackWithItsOwnSize) {
  ReleaseAlignedFloats();
  const int64_t floats = static_cast<int64_t>(kArenaMinBytes / sizeof(float));
  { AlignedFloats big = AlignedFloats::Make(floats * 3 / 4, false); }  // kept
  const size_t kept = RetainedScratchBytes();
  ASSERT_EQ(kept, kArenaMinBytes * 3 / 4);
  {
    AlignedFloats smaller = AlignedFloats::Make(floats / 2, false);  // the kept one
    EXPECT_EQ(RetainedScratchBytes(), 0u);
    EXPECT_EQ(smaller.ptr.get_deleter().bytes, kept);
  }
  EXPECT_EQ(RetainedScratchBytes(), kept);
  ReleaseAlignedFloats();
  EXPECT_EQ(RetainedScratchBytes(), 0u);
}

}  // namespace
}  // namespace onnxflow
