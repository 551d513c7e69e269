// The GEMM driver: packing, blocking and the split over cores. The vector code is in gemm-inl.h.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/math/gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/math/gemm-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "ops/cast/half_simd.h"
#include "ops/framework/parallel.h"
#include "ops/math/gemm.h"
#include "ops/math/gemm_block.h"

namespace onnxflow {

HWY_EXPORT(GemmTileImpl);
HWY_EXPORT(RunBlockImpl);
HWY_EXPORT(ApplyActivationImpl);
HWY_EXPORT(TransposeRowsImpl);

void ApplyActivation(const ActivationSpec& spec, float* data, int64_t n) {
  if (spec.kind == Activation::kNone || n <= 0) return;
  HWY_DYNAMIC_DISPATCH(ApplyActivationImpl)(spec, data, n);
}

void AddThenActivate(const ActivationSpec& spec, const float* addend, float* data, int64_t n) {
  if (addend != nullptr) {
    for (int64_t i = 0; i < n; ++i) data[i] += addend[i];
  }
  ApplyActivation(spec, data, n);
}

float ActivationScalar(const ActivationSpec& spec, float x) {
  switch (spec.kind) {
    case Activation::kNone: return x;
    case Activation::kRelu: return x > 0.0f || std::isnan(x) ? x : 0.0f;  // NaN stays, as in Activate
    case Activation::kLeakyRelu: return x < 0.0f ? x * spec.alpha : x;
    case Activation::kClip: return std::min(std::max(x, spec.alpha), spec.beta);
    case Activation::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case Activation::kTanh: return std::tanh(x);
    case Activation::kHardSigmoid: return std::min(std::max(x * spec.alpha + spec.beta, 0.0f), 1.0f);  // NaN stays
    case Activation::kHardSwish: return x * std::min(std::max(x * (1.0f / 6.0f) + 0.5f, 0.0f), 1.0f);
    case Activation::kSwish: return x / (1.0f + std::exp(-x));
    case Activation::kGelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752440f));
  }
  return x;
}

GemmTileShape GemmTile() {
  // Not cached: tests switch CPU targets, and a dispatched call costs a table lookup.
  return HWY_DYNAMIC_DISPATCH(GemmTileImpl)();
}

PackedA PackA(const float* a, int64_t lda, bool trans, int64_t m, int64_t k, float scale, int threads) {
  PackedA p;
  p.m = m;
  p.k = k;
  p.mr = GemmTile().mr;
  // Not zeroed up front: that was a serial pass over all of A (6% of a 1024^3 product on two
  // cores). Only the last strip's rows past M are zeros, written with the strip.
  p.data = AlignedFloats::Make(p.strips() * p.strip_size(), /*zero=*/false);
  const int64_t mr = p.mr;
  const auto transpose = HWY_DYNAMIC_DISPATCH(TransposeRowsImpl);
  ParallelFor(threads, p.strips(), MacCost(k * mr), [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      float* dst = p.data.get() + s * p.strip_size();
      const int64_t rows = std::min(mr, m - s * mr);
      if (rows < mr) std::fill(dst, dst + p.strip_size(), 0.0f);
      if (!trans) {
        transpose(a + s * mr * lda, lda, rows, k, scale, dst, mr);
      } else {
        for (int64_t kk = 0; kk < k; ++kk) {
          const float* src = a + kk * lda + s * mr;
          for (int64_t r = 0; r < rows; ++r) dst[kk * mr + r] = src[r] * scale;
        }
      }
    }
  });
  return p;
}

namespace {

// Strips of a 16-bit B widened at a time (HalfPackedB: a half model's weights). The whole L2-sized
// block widened at once was scratch of up to half the L2 per core, beside weights already halved.
constexpr int64_t kHalfWidenStrips = 4;

// op(B) in memory as a panel source: each block is copied strip by strip.
class MatrixPanelSource : public BPanelSource {
 public:
  MatrixPanelSource(const float* b, int64_t ldb, bool trans) : b_(b), ldb_(ldb), trans_(trans) {}

  void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const override {
    for (int64_t t = 0; t * nr < cols; ++t) {
      PackStrip(k0, kc, j0 + t * nr, std::min(nr, cols - t * nr), nr, dst + t * kc * nr);
    }
  }

 private:
  // Rows [k0, k0 + kc) of columns [j0, j0 + cols) as one strip: kc rows of nr floats, zero past cols.
  void PackStrip(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const {
    if (!trans_) {
      for (int64_t kk = 0; kk < kc; ++kk) {
        float* d = dst + kk * nr;
        std::memcpy(d, b_ + (k0 + kk) * ldb_ + j0, cols * sizeof(float));
        if (cols < nr) std::memset(d + cols, 0, (nr - cols) * sizeof(float));
      }
    } else {
      if (cols < nr) std::memset(dst, 0, kc * nr * sizeof(float));
      HWY_DYNAMIC_DISPATCH(TransposeRowsImpl)(b_ + j0 * ldb_ + k0, ldb_, cols, kc, 1.0f, dst, nr);
    }
  }

  const float* b_;
  int64_t ldb_;
  bool trans_;
};

// Packs strip t of op(B) (all k rows) into dst, zero past n.
void PackBStrip(const float* b, int64_t ldb, bool trans, int64_t k, int64_t n, int64_t nr, int64_t t,
                float* dst) {
  MatrixPanelSource(b, ldb, trans).PackBlock(0, k, t * nr, std::min(nr, n - t * nr), nr, dst);
}

// n 16-bit values widened into floats, or floats rounded into 16 bits.
void Widen(const uint16_t* in, bool bf16, float* out, int64_t n) {
  if (bf16) {
    BFloat16ToFloatArray(in, out, n);
  } else {
    HalfToFloatArray(in, out, n);
  }
}
void Narrow(const float* in, bool bf16, uint16_t* out, int64_t n) {
  if (bf16) {
    FloatToBFloat16Array(in, out, n);
  } else {
    FloatToHalfArray(in, out, n);
  }
}

}  // namespace

PackedB PackB(const float* b, int64_t ldb, bool trans, int64_t k, int64_t n, int threads) {
  PackedB p;
  p.k = k;
  p.n = n;
  p.nr = GemmTile().nr;
  p.data = AlignedFloats::Make(p.strips() * p.strip_size(), /*zero=*/false);  // strips zero their own padding
  ParallelFor(threads, p.strips(), MacCost(k * p.nr), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) PackBStrip(b, ldb, trans, k, n, p.nr, t, p.data.get() + t * p.strip_size());
  });
  return p;
}

GemmShape GemmShapeOf(int64_t m, int64_t n, int64_t k, const GemmInputA& a, const GemmInputB& b, int threads,
                      bool c_half) {
  GemmShape s;
  s.m = m;
  s.n = n;
  s.k = k;
  s.threads = threads;
  s.tile = GemmTile();
  s.a = a.packed != nullptr        ? GemmShape::A::kPacked
        : a.gather_base != nullptr ? GemmShape::A::kGathered
        : a.half != nullptr        ? GemmShape::A::kHalfMatrix
                                   : GemmShape::A::kMatrix;
  s.a_trans = a.trans;
  s.a_scaled = a.scale != 1.0f;
  if (b.source != nullptr) {
    const int64_t* offsets = nullptr;
    s.b = b.source->InPlaceRows(&offsets) != nullptr ? GemmShape::B::kSourceInPlace : GemmShape::B::kSource;
    bool bf16 = false;
    s.b_half = b.source->HalfStrips(s.tile.nr, &bf16) != nullptr;
  } else {
    s.b = b.packed != nullptr ? GemmShape::B::kPacked : GemmShape::B::kMatrix;
  }
  s.b_trans = b.trans;
  s.c_half = c_half;
  return s;
}

void Sgemm(int64_t m, int64_t n, int64_t k, const GemmInputA& a, const GemmInputB& b, float* c, int64_t ldc,
           const GemmEpilogue& epilogue, int threads) {
  if (m <= 0 || n <= 0) return;
  Sgemm(MakeGemmPlan(GemmShapeOf(m, n, k, a, b, threads, epilogue.half_c != nullptr)), a, b, c, ldc, epilogue);
}

void Sgemm(const GemmPlan& plan, const GemmInputA& a_in, const GemmInputB& b, float* c, int64_t ldc,
           const GemmEpilogue& epilogue) {
  const int64_t m = plan.shape.m, n = plan.shape.n, k = plan.shape.k;
  if (m <= 0 || n <= 0) return;
  uint16_t* const half_c = epilogue.half_c;
  if (plan.no_products) {  // C = act([C] + biases)
    std::vector<float> half_row(half_c != nullptr ? n : 0);
    for (int64_t i = 0; i < m; ++i) {
      float* row = half_c != nullptr ? half_row.data() : c + i * ldc;
      for (int64_t j = 0; j < n; ++j) {
        float v = epilogue.accumulate ? row[j] : epilogue.addend != nullptr ? epilogue.addend[i * ldc + j] : 0.0f;
        if (epilogue.row_bias != nullptr) v += epilogue.row_bias[i];
        if (epilogue.col_bias != nullptr) v += epilogue.col_bias[j];
        row[j] = ActivationScalar(epilogue.activation, v);
      }
      if (half_c != nullptr) Narrow(row, epilogue.half_c_bf16, half_c + i * ldc, n);
    }
    if (epilogue.block_done) epilogue.block_done(0, m, 0, n);
    return;
  }
  const int64_t mr = plan.mr, nr = plan.nr;
  const int threads = plan.threads;
  using APath = GemmPlan::APath;
  using BPath = GemmPlan::BPath;

  // A 16-bit A that the blocks do not widen row by row (fewer rows than a strip, or transposed) is
  // widened whole here and packed as a float A.
  AlignedFloats widened_a;
  GemmInputA float_a;
  if (a_in.half != nullptr && plan.a != APath::kWidenRows) {
    const int64_t rows = a_in.trans ? k : m, cols = a_in.trans ? m : k;
    widened_a = AlignedFloats::Make(rows * cols, /*zero=*/false);
    for (int64_t r = 0; r < rows; ++r) {
      Widen(a_in.half + r * a_in.ld, a_in.half_bf16, widened_a.get() + r * cols, cols);
    }
    float_a.data = widened_a.get();
    float_a.ld = cols;
    float_a.trans = a_in.trans;
    float_a.scale = a_in.scale;
  }
  const GemmInputA& a = float_a.data != nullptr ? float_a : a_in;
  // A as the blocks read it: packed (given or here), or gathered (given, or A's rows in place).
  PackedA local_a;
  const PackedA* pa = a.packed;
  GemmInputA in_place_a;
  std::vector<int64_t> a_row_starts;
  const GemmInputA* ga = &a;
  if (plan.a == APath::kInPlace) {  // rows at their offsets, columns contiguous (no gather_cols)
    a_row_starts.resize(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) a_row_starts[i] = i * a.ld;
    in_place_a.gather_base = a.data;
    in_place_a.gather_rows = a_row_starts.data();
    ga = &in_place_a;
  } else if (plan.a == APath::kPackHere) {
    local_a = PackA(a.data, a.ld, a.trans, m, k, a.scale, threads);
    pa = &local_a;
  }
  const bool gather_a = plan.a == APath::kInPlace || plan.a == APath::kGathered;

  const PackedB* pb = plan.b == BPath::kPacked ? b.packed : nullptr;
  const MatrixPanelSource matrix_source(b.data, b.ld, b.trans);
  const BPanelSource* source = b.source != nullptr ? b.source : &matrix_source;
  const int64_t n_strips = plan.n_strips;
  AlignedFloats b_tail;
  if (plan.b_tail) {
    b_tail = AlignedFloats::Make(k * nr);
    PackBStrip(b.data, b.ld, false, k, n, nr, n_strips - 1, b_tail.get());
  }
  // A one-row product of float16 or bfloat16 weights (a half decoder's per-token step) reads their
  // strips as they are, widened in registers four streams at a time, instead of widening each
  // block into scratch first: one stream of demand loads there held GPT-2's step at 9 GB/s of
  // weights. More rows widen a half B block by block; each block's tiles request the next one's
  // strips.
  bool half_bf16 = false;
  const uint16_t* half_source =
      plan.b == BPath::kPackEachBlock && b.source != nullptr ? b.source->HalfStrips(nr, &half_bf16) : nullptr;
  const uint16_t* half_strips = m == 1 && !gather_a ? half_source : nullptr;
  const uint16_t* half_blocks = half_strips == nullptr ? half_source : nullptr;
  const int64_t* in_place_offsets = nullptr;
  const float* in_place_base = plan.b == BPath::kSourceInPlace ? b.source->InPlaceRows(&in_place_offsets) : nullptr;
  PackedB shared_b;
  if (plan.b == BPath::kPackShared) {
    shared_b.k = k;
    shared_b.n = n;
    shared_b.nr = nr;
    shared_b.data = AlignedFloats::Make(n_strips * k * nr, /*zero=*/false);
    const int64_t kc = plan.kc, k_chunks = (k + kc - 1) / kc;
    ParallelFor(threads, n_strips * k_chunks, MacCost(kc * nr), [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t strip = t / k_chunks, k0 = (t % k_chunks) * kc, rows = std::min(kc, k - k0);
        source->PackBlock(k0, rows, strip * nr, std::min(nr, n - strip * nr), nr,
                          shared_b.data.get() + strip * shared_b.strip_size() + k0 * nr);
      }
    });
    pb = &shared_b;
  }

  const auto run_block = HWY_DYNAMIC_DISPATCH(RunBlockImpl);
  const int64_t n_blocks = plan.n_blocks, mc_strips = plan.mc_strips, k_blocks = plan.k_blocks;
  const int64_t tasks = plan.tasks();
  // The widest column block's strips: the size of a task's B block when it packs its own. A half
  // B is widened kHalfWidenStrips strips at a time instead (see below).
  const int64_t block_strips = half_blocks != nullptr ? std::min<int64_t>(kHalfWidenStrips, n_strips)
                                                      : (n_strips + n_blocks - 1) / n_blocks;
  // A 16-bit A: each task widens its rows of each K block into rows of plan.kc floats, read in place.
  // A 16-bit C: each task sums its block in a float tile of its own columns, rounded at the end.
  const bool widen_a = plan.a == APath::kWidenRows;
  const int64_t task_rows = plan.mc_strips * mr, task_cols = (n_strips + n_blocks - 1) / n_blocks * nr;
  std::vector<int64_t> widened_rows(widen_a ? task_rows : 0);
  for (int64_t i = 0; i < static_cast<int64_t>(widened_rows.size()); ++i) widened_rows[i] = i * plan.kc;
  ParallelFor(threads, tasks, MacCost(m * n * k / tasks), [&](int64_t t0, int64_t t1) {
    AlignedFloats block;  // this chunk's B block (kPackEachBlock), from the scratch free list
    AlignedFloats a_rows, c_tile;  // a 16-bit A's widened rows, a 16-bit C's float sums
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t mb = task / n_blocks, nb = task % n_blocks;
      const int64_t i0 = mb * mc_strips * mr;
      const int64_t rows = std::min(m, i0 + mc_strips * mr) - i0;
      // Blocks of strips as equal as they come (17 strips in 4 blocks are 4, 4, 4 and 5, not 5, 5,
      // 5 and 2, which left one of two cores idle for 3 strips in 20: M 128, N 784, K 1152 on two).
      const int64_t s0 = nb * n_strips / n_blocks, s1 = (nb + 1) * n_strips / n_blocks;
      const int64_t j0 = s0 * nr;
      const int64_t cols = std::min(n, s1 * nr) - j0;
      const bool has_tail = plan.b_tail && s1 >= n_strips;
      float* c_block = nullptr;  // C's block, or the tile a 16-bit C's block is summed in
      int64_t ldc_block = ldc;
      if (half_c != nullptr) {
        if (c_tile.get() == nullptr) c_tile = AlignedFloats::Make(task_rows * task_cols, /*zero=*/false);
        c_block = c_tile.get();
        ldc_block = cols;
      } else {
        c_block = c + i0 * ldc + j0;
      }
      for (int64_t kb = 0; kb < k_blocks; ++kb) {
        const int64_t k0 = kb * plan.kc;
        const int64_t kc = std::min(plan.kc, k - k0);
        gemm_internal::GemmBlock blk;
        if (widen_a) {
          if (a_rows.get() == nullptr) a_rows = AlignedFloats::Make(task_rows * plan.kc, /*zero=*/false);
          for (int64_t r = 0; r < rows; ++r) {
            Widen(a.half + (i0 + r) * a.ld + k0, a.half_bf16, a_rows.get() + r * plan.kc, kc);
          }
          blk.a = a_rows.get();
          blk.a_row_offsets = widened_rows.data();
        } else if (gather_a) {
          blk.a_row_offsets = ga->gather_rows + i0;
          if (ga->gather_cols != nullptr) {
            blk.a = ga->gather_base;
            blk.a_col_offsets = ga->gather_cols + k0;
          } else {
            blk.a = ga->gather_base + k0;
          }
        } else {
          blk.a = pa->data.get() + (i0 / mr) * pa->strip_size() + k0 * mr;
          blk.a_strip_stride = pa->strip_size();
        }
        blk.m = rows;
        switch (plan.b) {
          case BPath::kPackEachBlock:
            if (half_strips != nullptr) {
              blk.b_half = half_strips + (s0 * k + k0) * nr;
              blk.b_half_bf16 = half_bf16;
              blk.b_strip_stride = k * nr;
              blk.b_row_stride = nr;
              break;
            }
            if (block.get() == nullptr) block = AlignedFloats::Make(block_strips * plan.kc * nr, /*zero=*/false);
            if (half_blocks == nullptr) source->PackBlock(k0, kc, j0, cols, nr, block.get());
            blk.b = block.get();
            blk.b_strip_stride = kc * nr;
            blk.b_row_stride = nr;
            break;
          case BPath::kSourceInPlace:
            blk.b = in_place_base + j0;
            blk.b_strip_stride = nr;
            blk.b_row_offsets = in_place_offsets + k0;
            break;
          case BPath::kRaw:
            blk.b = b.data + k0 * b.ld + j0;
            blk.b_strip_stride = nr;
            blk.b_row_stride = b.ld;
            blk.b_tail = has_tail ? b_tail.get() + k0 * nr : nullptr;
            break;
          case BPath::kPacked:
          case BPath::kPackShared:
            blk.stream_b = plan.b == BPath::kPacked;
            blk.b = pb->data.get() + s0 * pb->strip_size() + k0 * nr;
            if (blk.stream_b && kb + 1 < k_blocks) blk.next_b = blk.b + kc * nr;  // same strip, next k
            blk.b_strip_stride = pb->strip_size();
            blk.b_row_stride = nr;
            break;
        }
        blk.n = cols;
        blk.kc = kc;
        blk.c = c_block;
        blk.ldc = ldc_block;
        blk.load_c = kb > 0 || epilogue.accumulate;
        blk.addend = !blk.load_c && epilogue.addend != nullptr ? epilogue.addend + i0 * ldc + j0 : nullptr;
        blk.last = kb == k_blocks - 1;
        blk.row_bias = epilogue.row_bias != nullptr ? epilogue.row_bias + i0 : nullptr;
        blk.col_bias = epilogue.col_bias != nullptr ? epilogue.col_bias + j0 : nullptr;
        blk.activation = epilogue.activation;
        if (blk.last && epilogue.block_done) {
          blk.rows_done = &epilogue.block_done;
          blk.row0 = i0;
          blk.col0 = j0;
        }
        // B-outer order finishes every row at once, at the end: not for a caller that consumes
        // each strip of rows while it is in cache.
        blk.b_outer = plan.b_outer && blk.rows_done == nullptr;
        if (half_blocks == nullptr) {
          run_block(blk);
          continue;
        }
        // A half B: widened kHalfWidenStrips strips at a time, each piece a block of its own.
        // While one piece runs, its tiles request the 16-bit strips of the next: the rest of this
        // block, else the next K block, else the next task's first.
        for (int64_t p0 = s0; p0 < s1; p0 += block_strips) {
          const int64_t p1 = std::min(s1, p0 + block_strips), dj = (p0 - s0) * nr;
          gemm_internal::GemmBlock piece = blk;
          piece.n = std::min(n, p1 * nr) - p0 * nr;
          source->PackBlock(k0, kc, p0 * nr, piece.n, nr, block.get());
          piece.c += dj;
          if (piece.addend != nullptr) piece.addend += dj;
          if (piece.col_bias != nullptr) piece.col_bias += dj;
          piece.col0 += dj;
          int64_t next_strip = p1, next_k = k0;
          if (p1 == s1) {
            next_strip = kb + 1 < k_blocks ? s0 : task + 1 < t1 ? ((task + 1) % n_blocks) * n_strips / n_blocks : -1;
            next_k = kb + 1 < k_blocks ? k0 + kc : 0;
          }
          if (next_strip >= 0) {
            piece.next_half = half_blocks + (next_strip * k + next_k) * nr;
            piece.next_half_strip_stride = k * nr;
          }
          run_block(piece);
        }
      }
      if (half_c != nullptr) {
        for (int64_t r = 0; r < rows; ++r) {
          Narrow(c_block + r * ldc_block, epilogue.half_c_bf16, half_c + (i0 + r) * ldc + j0, cols);
        }
      }
    }
  });
}

void SgemmReference(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool trans_a, const float* b,
                    int64_t ldb, bool trans_b, float alpha, float* c, int64_t ldc, const GemmEpilogue& epilogue) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0.0;
      for (int64_t kk = 0; kk < k; ++kk) {
        const float av = trans_a ? a[kk * lda + i] : a[i * lda + kk];
        const float bv = trans_b ? b[j * ldb + kk] : b[kk * ldb + j];
        sum += static_cast<double>(av) * bv;
      }
      float v = static_cast<float>(sum) * alpha;
      if (epilogue.accumulate) v += c[i * ldc + j];
      if (!epilogue.accumulate && epilogue.addend != nullptr) v += epilogue.addend[i * ldc + j];
      if (epilogue.row_bias != nullptr) v += epilogue.row_bias[i];
      if (epilogue.col_bias != nullptr) v += epilogue.col_bias[j];
      c[i * ldc + j] = ActivationScalar(epilogue.activation, v);
    }
  }
}

}  // namespace onnxflow

#endif  // HWY_ONCE
