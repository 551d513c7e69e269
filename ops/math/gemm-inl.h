// SIMD part of the GEMM: the register-tiled micro-kernel, the macro-kernel that walks one block of
// C, and the fused activations. Compiled once per CPU target through hwy/foreach_target.h (see
// gemm.cc); the driver in gemm.cc never touches vectors.

#if defined(ONNXFLOW_OPS_MATH_GEMM_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_MATH_GEMM_INL_H_
#undef ONNXFLOW_OPS_MATH_GEMM_INL_H_
#else
#define ONNXFLOW_OPS_MATH_GEMM_INL_H_
#endif

#include <algorithm>
#include <array>
#include <cstring>
#include <type_traits>
#include <utility>

#include "hwy/cache_control.h"
#include "hwy/contrib/math/math-inl.h"
#include "hwy/highway.h"
#include "ops/math/activate-inl.h"
#include "ops/math/gemm_block.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Micro-tile per target. AVX-512 has 32 vector registers: 8 rows x 3 vectors = 24 accumulators,
// 3 for the B slice and one broadcast. AVX2/SSE4 have 16: 6 x 2 = 12 accumulators. The tile is
// kMr rows by kNv vectors of B columns.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kMr = 8;
constexpr size_t kNv = 3;
#elif HWY_TARGET == HWY_SCALAR
constexpr size_t kMr = 4;
constexpr size_t kNv = 4;
#else
constexpr size_t kMr = 6;
constexpr size_t kNv = 2;
#endif

void ApplyActivationImpl(const ActivationSpec& act, float* HWY_RESTRICT data, int64_t n) {
  if (act.kind == Activation::kNone) return;
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  int64_t i = 0;
  for (; i + lanes <= n; i += lanes) hn::StoreU(Activate(d, act, hn::LoadU(d, data + i)), d, data + i);
  if (i < n) {
    // The tail goes through a full vector on the stack: no read or write past the array.
    HWY_ALIGN float buf[hn::MaxLanes(d)] = {};
    std::memcpy(buf, data + i, static_cast<size_t>(n - i) * sizeof(float));
    hn::Store(Activate(d, act, hn::Load(d, buf)), d, buf);
    std::memcpy(data + i, buf, static_cast<size_t>(n - i) * sizeof(float));
  }
}

GemmTileShape GemmTileImpl() {
  const hn::ScalableTag<float> d;
  return GemmTileShape{static_cast<int64_t>(kMr), static_cast<int64_t>(kNv * hn::Lanes(d))};
}

// Rows of a row-major matrix written as columns: dst[kk * stride + r] = src(r, kk) (times scale)
// for r < rows, kk < k. Packing A's strips (stride = the tile's rows) and a transposed B's strips
// (stride = the strip's columns: attention's K^T) are this. A transformer's MatMul packs its
// activation on every run, and the scalar loop (eight rows read side by side, one element at a
// time) took 5% of BERT-base's time: blocks of 4 rows x 4 columns are transposed in registers.
template <bool kScaled>
void TransposeRows(const float* HWY_RESTRICT src, int64_t ld, int64_t rows, int64_t k, float scale,
                   float* HWY_RESTRICT dst, int64_t stride) {
  int64_t r0 = 0;
#if HWY_TARGET != HWY_SCALAR
  const hn::FixedTag<float, 4> d4;
  const auto s = hn::Set(d4, scale);
  for (; r0 + 4 <= rows; r0 += 4) {
    const float* HWY_RESTRICT s0 = src + r0 * ld;
    int64_t kk = 0;
    for (; kk + 4 <= k; kk += 4) {
      auto x0 = hn::LoadU(d4, s0 + kk), x1 = hn::LoadU(d4, s0 + ld + kk);
      auto x2 = hn::LoadU(d4, s0 + 2 * ld + kk), x3 = hn::LoadU(d4, s0 + 3 * ld + kk);
      if (kScaled) {
        x0 = hn::Mul(x0, s);
        x1 = hn::Mul(x1, s);
        x2 = hn::Mul(x2, s);
        x3 = hn::Mul(x3, s);
      }
      const auto lo01 = hn::InterleaveLower(d4, x0, x1), lo23 = hn::InterleaveLower(d4, x2, x3);
      const auto hi01 = hn::InterleaveUpper(d4, x0, x1), hi23 = hn::InterleaveUpper(d4, x2, x3);
      float* HWY_RESTRICT d = dst + kk * stride + r0;
      hn::StoreU(hn::ConcatLowerLower(d4, lo23, lo01), d4, d);
      hn::StoreU(hn::ConcatUpperUpper(d4, lo23, lo01), d4, d + stride);
      hn::StoreU(hn::ConcatLowerLower(d4, hi23, hi01), d4, d + 2 * stride);
      hn::StoreU(hn::ConcatUpperUpper(d4, hi23, hi01), d4, d + 3 * stride);
    }
    for (; kk < k; ++kk) {
      for (int64_t r = r0; r < r0 + 4; ++r) dst[kk * stride + r] = kScaled ? src[r * ld + kk] * scale : src[r * ld + kk];
    }
  }
#endif
  for (; r0 < rows; ++r0) {  // rows past the last block of 4 (AVX2's tile has 6, a partial strip fewer)
    const float* HWY_RESTRICT row = src + r0 * ld;
    for (int64_t kk = 0; kk < k; ++kk) dst[kk * stride + r0] = kScaled ? row[kk] * scale : row[kk];
  }
}

void TransposeRowsImpl(const float* src, int64_t ld, int64_t rows, int64_t k, float scale, float* dst,
                       int64_t stride) {
  if (scale == 1.0f) {
    TransposeRows<false>(src, ld, rows, k, scale, dst, stride);
  } else {
    TransposeRows<true>(src, ld, rows, k, scale, dst, stride);
  }
}

struct TileEpilogue {
  const float* row_bias;  // at the tile's first row, or null
  const float* col_bias;  // at the tile's first column, or null
  ActivationSpec activation;
};

// The epilogue of one vector of sums: + the row's bias, + the columns' bias (when the tile has
// one: adding a zero instead would turn a -0 sum into +0), then the activation. Every tile shape
// (micro-kernel, row tile, narrow columns) finishes through this one.
template <class D, class V>
HWY_INLINE V FinishSums(D d, const TileEpilogue& e, V x, V row, bool has_col, V col) {
  x = hn::Add(x, row);
  if (has_col) x = hn::Add(x, col);
  return Activate(d, e.activation, x);
}

// Where the micro-kernel reads its operands from.
enum class Operands {
  kPacked,    // A strip packed (kc x kMr), B rows at a fixed stride
  kInPlaceB,  // A packed; B row k at b + b_offsets[k] (a stride-1 convolution's padded image)
  kGatherA,   // A element (r, k) at a[a_rows[r] + a_cols[k]] (an image, pixels as rows); B packed
  kRowsA,     // A element (r, k) at a[a_rows[r] + k] (a matrix read in place); B packed
};

// Lines a tile requests while it runs: `step` floats from `at` per k (none when `at` is null).
// Weights packed at load and streamed from memory (the next B strip on its first pass, a share of
// it in B-outer order) are requested into L2, the rest into L1: one core keeps only so many L1
// requests in flight, and requests to L1 held a tile of 8 rows against streamed weights at 11
// GB/s (gemm_benchmark StreamedB, M 8 x N 3072 x K 768, a short prompt's feed-forward: 829 -> 699
// us on one core, 403 -> 334 on two; M 16 on two 469 -> 418; the 128-row cases unchanged within
// noise; GPT-2's 8-token prefill on two cores 19.0 -> 16.5 ms). A half B's next piece stays an L1
// request: into L2, ViT-S float16 ran 3-4% slower on two cores.
struct TilePrefetch {
  const float* at = nullptr;
  size_t step = 0;
  bool from_memory = false;
};

// C[kRows x kVecs*lanes] (+)= A (kRows x kc, one broadcast per row and k) * B rows (kc x kVecs
// vectors). The accumulators are a fixed-size array indexed only by unrolled constants, so the
// compiler keeps them in registers.
template <size_t kRows, size_t kVecs, Operands kFrom>
HWY_NOINLINE void MicroKernel(const float* HWY_RESTRICT a, const int64_t* HWY_RESTRICT a_rows,
                              const int64_t* HWY_RESTRICT a_cols, const float* HWY_RESTRICT b, size_t b_stride,
                              const int64_t* HWY_RESTRICT b_offsets, size_t kc, float* HWY_RESTRICT c, size_t ldc,
                              const float* c_in, const TileEpilogue* epilogue, TilePrefetch prefetch) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const size_t lanes = hn::Lanes(d);
  V acc[kRows][kVecs];
  HWY_UNROLL(16)
  for (size_t r = 0; r < kRows; ++r) {
    HWY_UNROLL(16)
    for (size_t v = 0; v < kVecs; ++v) acc[r][v] = c_in != nullptr ? hn::LoadU(d, c_in + r * ldc + v * lanes) : hn::Zero(d);
  }
  constexpr bool kRowOffsets = kFrom == Operands::kGatherA || kFrom == Operands::kRowsA;
  int64_t row_at[kRows];  // gathered A: each row's offset, kept in registers
  HWY_UNROLL(16)
  for (size_t r = 0; r < kRows; ++r) row_at[r] = kRowOffsets ? a_rows[r] : 0;
  for (size_t k = 0; k < kc; ++k) {
    const float* HWY_RESTRICT bk = kFrom == Operands::kInPlaceB ? b + b_offsets[k] : b + k * b_stride;
    const float* HWY_RESTRICT ak = kFrom == Operands::kGatherA ? a + a_cols[k] : kFrom == Operands::kRowsA ? a + k : a + k * kMr;
    if (prefetch.at != nullptr) {  // lines wanted soon (RunBlockImpl says which)
      for (size_t f = 0; f < prefetch.step; f += lanes) {
        const float* line = prefetch.at + k * prefetch.step + f;
        if (prefetch.from_memory) {
          __builtin_prefetch(line, /*rw=*/0, /*locality=*/2);  // prefetcht1: into L2
        } else {
          hwy::Prefetch(line);
        }
      }
    }
    V bv[kVecs];
    HWY_UNROLL(16)
    for (size_t v = 0; v < kVecs; ++v) bv[v] = hn::LoadU(d, bk + v * lanes);
    HWY_UNROLL(16)
    for (size_t r = 0; r < kRows; ++r) {
      const V av = hn::Set(d, kRowOffsets ? ak[row_at[r]] : ak[r]);
      HWY_UNROLL(16)
      for (size_t v = 0; v < kVecs; ++v) acc[r][v] = hn::MulAdd(av, bv[v], acc[r][v]);
    }
  }
  if (epilogue != nullptr) {
    HWY_UNROLL(16)
    for (size_t r = 0; r < kRows; ++r) {
      const V row = epilogue->row_bias != nullptr ? hn::Set(d, epilogue->row_bias[r]) : hn::Zero(d);
      HWY_UNROLL(16)
      for (size_t v = 0; v < kVecs; ++v) {
        const bool has_col = epilogue->col_bias != nullptr;
        const V col = has_col ? hn::LoadU(d, epilogue->col_bias + v * lanes) : hn::Zero(d);
        acc[r][v] = FinishSums(d, *epilogue, acc[r][v], row, has_col, col);
      }
    }
  }
  HWY_UNROLL(16)
  for (size_t r = 0; r < kRows; ++r) {
    HWY_UNROLL(16)
    for (size_t v = 0; v < kVecs; ++v) hn::StoreU(acc[r][v], d, c + r * ldc + v * lanes);
  }
}

// c_in: the tile's starting values (C itself when accumulating, an addend, or null for zeros),
// read with C's leading dimension. The last argument names lines to request while the tile runs:
// the next A strip, or a share of the next B strip when B streams from memory (RunBlockImpl says
// which).
using MicroKernelFn = void (*)(const float*, const int64_t*, const int64_t*, const float*, size_t, const int64_t*,
                               size_t, float*, size_t, const float*, const TileEpilogue*, TilePrefetch);

template <Operands kFrom, size_t kRows, size_t... kVecs>
constexpr std::array<MicroKernelFn, sizeof...(kVecs)> KernelRow(std::index_sequence<kVecs...>) {
  return {&MicroKernel<kRows, kVecs + 1, kFrom>...};
}
template <Operands kFrom, size_t... kRows>
constexpr std::array<std::array<MicroKernelFn, kNv>, sizeof...(kRows)> KernelTable(std::index_sequence<kRows...>) {
  return {KernelRow<kFrom, kRows + 1>(std::make_index_sequence<kNv>())...};
}

// One row of C (a decoder's per-token step, a recurrent step): the weights come from memory once
// per run, and the micro-kernel reads them one strip, one stream, at a time. A core reads faster
// from several streams than from one, so this tile walks kRowStrips whole strips side by side.
// Same products in the same order as the micro-kernel, so the same bits. Measured here (one core,
// 144 MB of 48-column strips, K 768, this loop in C): 1 stream 10.1-11.8 GB/s, 4 streams
// 12.6-12.8, 8 streams 13.5-13.9; the float GPT-2-small step (394 MB of weights) at one thread
// 29.5-31.1 -> 28.1-29.2 ms with 8 strips for 4. AVX-512 holds 8 x 3 accumulators; AVX2's 16
// registers hold 4 x 2 and the load and broadcast.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr size_t kRowStrips = 8;
#else
constexpr size_t kRowStrips = 4;
#endif

// B as the row kernel reads it: float, or float16 or bfloat16 widened in registers (a half
// model's weights kept in 16 bits, ops/math/constant_b.h: half the bytes from memory, the same
// products). A bfloat16 is a float's upper half: widened by a shift.
template <class D>
HWY_INLINE hn::Vec<D> LoadRowB(D d, const float* HWY_RESTRICT p) {
  return hn::LoadU(d, p);
}
template <class D>
HWY_INLINE hn::Vec<D> LoadRowB(D d, const hwy::float16_t* HWY_RESTRICT p) {
  return hn::PromoteTo(d, hn::LoadU(hn::Rebind<hwy::float16_t, D>(), p));
}
template <class D>
HWY_INLINE hn::Vec<D> LoadRowB(D d, const hwy::bfloat16_t* HWY_RESTRICT p) {
  const hn::RebindToUnsigned<D> du;
  const auto bits = hn::LoadU(hn::Rebind<uint16_t, D>(), reinterpret_cast<const uint16_t*>(p));
  return hn::BitCast(d, hn::ShiftLeft<16>(hn::PromoteTo(du, bits)));
}

template <typename TB, size_t kStrips>
HWY_NOINLINE void RowKernel(const float* HWY_RESTRICT a, const TB* HWY_RESTRICT b, size_t b_strip_stride,
                            size_t b_row_stride, size_t kc, float* HWY_RESTRICT c, const float* c_in,
                            const TileEpilogue* epilogue) {
  const hn::ScalableTag<float> d;
  using V = hn::Vec<decltype(d)>;
  const size_t lanes = hn::Lanes(d), nr = kNv * lanes;
  V acc[kStrips][kNv];
  HWY_UNROLL(16)
  for (size_t s = 0; s < kStrips; ++s) {
    HWY_UNROLL(16)
    for (size_t v = 0; v < kNv; ++v) acc[s][v] = c_in != nullptr ? hn::LoadU(d, c_in + s * nr + v * lanes) : hn::Zero(d);
  }
  for (size_t k = 0; k < kc; ++k) {
    const V av = hn::Set(d, a[k * kMr]);
    const TB* HWY_RESTRICT bk = b + k * b_row_stride;
    HWY_UNROLL(16)
    for (size_t s = 0; s < kStrips; ++s) {
      HWY_UNROLL(16)
      for (size_t v = 0; v < kNv; ++v) {
        acc[s][v] = hn::MulAdd(av, LoadRowB(d, bk + s * b_strip_stride + v * lanes), acc[s][v]);
      }
    }
  }
  const V row = epilogue != nullptr && epilogue->row_bias != nullptr ? hn::Set(d, epilogue->row_bias[0]) : hn::Zero(d);
  HWY_UNROLL(16)
  for (size_t s = 0; s < kStrips; ++s) {
    HWY_UNROLL(16)
    for (size_t v = 0; v < kNv; ++v) {
      V x = acc[s][v];
      if (epilogue != nullptr) {
        const bool has_col = epilogue->col_bias != nullptr;
        const V col = has_col ? hn::LoadU(d, epilogue->col_bias + s * nr + v * lanes) : hn::Zero(d);
        x = FinishSums(d, *epilogue, x, row, has_col, col);
      }
      hn::StoreU(x, d, c + s * nr + v * lanes);
    }
  }
}

// RowKernel over `strips` whole strips side by side, 1 to kRowStrips of them (a block's last
// strips in one tile too, however many are left).
template <typename TB, size_t... kN>
constexpr auto RowKernelTable(std::index_sequence<kN...>) {
  return std::array{&RowKernel<TB, kN + 1>...};
}
template <typename TB>
void RowTile(size_t strips, const float* HWY_RESTRICT a, const TB* HWY_RESTRICT b, size_t b_strip_stride,
             size_t b_row_stride, size_t kc, float* HWY_RESTRICT c, const float* c_in, const TileEpilogue* epilogue) {
  static constexpr auto kTable = RowKernelTable<TB>(std::make_index_sequence<kRowStrips>());
  kTable[strips - 1](a, b, b_strip_stride, b_row_stride, kc, c, c_in, epilogue);
}

// A strip of only a few columns (a 7x7 map is 49 = 48 + 1 columns, 14x14 is 196 = 192 + 4) would
// waste a whole vector of B per row in the micro-kernel (8 broadcasts and a load for 8 useful
// products per k). Instead the tile runs down the columns: the packed A strip holds the 8 rows of
// one k contiguously, so acc[j] (rows 0..7 of column j) += A[k, 0..7] * B[k, j] is one 8-lane
// load, one broadcast and one FMA per column: about four times cheaper for a single column.
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
constexpr int64_t kNarrowMaxCols = 6;

template <size_t kCols>
HWY_NOINLINE void NarrowKernel(const float* HWY_RESTRICT a, const float* HWY_RESTRICT b, size_t b_stride,
                               size_t kc, size_t rows, float* HWY_RESTRICT c, size_t ldc, const float* c_in,
                               const TileEpilogue* epilogue) {
  static_assert(kMr == 8, "one 8-lane vector holds a column of the tile");
  const hn::FixedTag<float, 8> d8;
  using V8 = hn::Vec<decltype(d8)>;
  HWY_ALIGN float column[kMr] = {};
  V8 acc[kCols];
  HWY_UNROLL(8)
  for (size_t j = 0; j < kCols; ++j) {
    if (c_in != nullptr) {
      for (size_t r = 0; r < rows; ++r) column[r] = c_in[r * ldc + j];
    }
    acc[j] = hn::Load(d8, column);
  }
  // With one or two columns a single chain of FMAs would wait on each one's latency: consecutive
  // k go to kSets separate partial sums, added at the end.
  constexpr size_t kSets = kCols >= 4 ? 1 : kCols >= 2 ? 2 : 4;
  V8 part[kSets][kCols];
  HWY_UNROLL(8)
  for (size_t j = 0; j < kCols; ++j) {
    part[0][j] = acc[j];
    HWY_UNROLL(4)
    for (size_t q = 1; q < kSets; ++q) part[q][j] = hn::Zero(d8);
  }
  size_t k = 0;
  for (; k + kSets <= kc; k += kSets) {
    HWY_UNROLL(4)
    for (size_t q = 0; q < kSets; ++q) {
      const V8 av = hn::LoadU(d8, a + (k + q) * kMr);
      const float* HWY_RESTRICT bk = b + (k + q) * b_stride;
      HWY_UNROLL(8)
      for (size_t j = 0; j < kCols; ++j) part[q][j] = hn::MulAdd(av, hn::Set(d8, bk[j]), part[q][j]);
    }
  }
  for (; k < kc; ++k) {
    const V8 av = hn::LoadU(d8, a + k * kMr);
    const float* HWY_RESTRICT bk = b + k * b_stride;
    HWY_UNROLL(8)
    for (size_t j = 0; j < kCols; ++j) part[0][j] = hn::MulAdd(av, hn::Set(d8, bk[j]), part[0][j]);
  }
  HWY_UNROLL(8)
  for (size_t j = 0; j < kCols; ++j) {
    acc[j] = part[0][j];
    HWY_UNROLL(4)
    for (size_t q = 1; q < kSets; ++q) acc[j] = hn::Add(acc[j], part[q][j]);
  }
  V8 row_bias = hn::Zero(d8);
  if (epilogue != nullptr && epilogue->row_bias != nullptr) {
    std::fill(column, column + kMr, 0.0f);
    std::copy(epilogue->row_bias, epilogue->row_bias + rows, column);
    row_bias = hn::Load(d8, column);
  }
  HWY_UNROLL(8)
  for (size_t j = 0; j < kCols; ++j) {
    V8 x = acc[j];
    if (epilogue != nullptr) {
      const bool has_col = epilogue->col_bias != nullptr;
      x = FinishSums(d8, *epilogue, x, row_bias, has_col, has_col ? hn::Set(d8, epilogue->col_bias[j]) : hn::Zero(d8));
    }
    hn::Store(x, d8, column);
    for (size_t r = 0; r < rows; ++r) c[r * ldc + j] = column[r];
  }
}

using NarrowKernelFn = void (*)(const float*, const float*, size_t, size_t, size_t, float*, size_t, const float*,
                                const TileEpilogue*);
template <size_t... kCols>
constexpr std::array<NarrowKernelFn, sizeof...(kCols)> NarrowTable(std::index_sequence<kCols...>) {
  return {&NarrowKernel<kCols + 1>...};
}
#else
constexpr int64_t kNarrowMaxCols = 0;  // 6- and 4-row tiles do not fill a vector down a column
#endif

// Walks one block of C: strips of A outside (the A micro-panel stays in L1), strips of B inside
// (the B block stays in L2). Partial tiles at the right edge run through a full-width scratch
// tile so that no vector touches memory past C or the bias.
void RunBlockImpl(const gemm_internal::GemmBlock& blk) {
  static constexpr auto kPackedTable = KernelTable<Operands::kPacked>(std::make_index_sequence<kMr>());
  static constexpr auto kInPlaceTable = KernelTable<Operands::kInPlaceB>(std::make_index_sequence<kMr>());
  static constexpr auto kGatherTable = KernelTable<Operands::kGatherA>(std::make_index_sequence<kMr>());
  // A matrix read in place has no column offsets to load per k: one load fewer beside the tile's
  // broadcasts made BERT-base's 128-token MatMuls 8-14% faster on two cores (a Sapphire Rapids
  // vCPU pair, M 128 x N 768 x K 768 253 -> 287 GFLOP/s).
  static constexpr auto kRowsTable = KernelTable<Operands::kRowsA>(std::make_index_sequence<kMr>());
  const bool in_place = blk.b_row_offsets != nullptr;
  const bool gather = blk.a_row_offsets != nullptr;
  const auto& table = gather ? (blk.a_col_offsets != nullptr ? kGatherTable : kRowsTable)
                             : in_place ? kInPlaceTable : kPackedTable;
  const hn::ScalableTag<float> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const int64_t nr = lanes * static_cast<int64_t>(kNv);
  const int64_t b_strips = (blk.n + nr - 1) / nr;
  // Where the tile at row i, column j writes and what it starts from and finishes with.
  struct TileOut {
    TileEpilogue epi;
    float* c;
    const float* addend;
  };
  const auto tile_out = [&](int64_t i, int64_t j) {
    return TileOut{{blk.row_bias != nullptr ? blk.row_bias + i : nullptr,
                    blk.col_bias != nullptr ? blk.col_bias + j : nullptr, blk.activation},
                   blk.c + i * blk.ldc + j,
                   blk.addend != nullptr ? blk.addend + i * blk.ldc + j : nullptr};
  };
  // A tile whose columns end before its strip does (the right edge of C) runs on a full-width
  // scratch tile, so that no vector touches memory past C or the column bias: `kernel(tile, ld,
  // start, epi)` computes it there from C's or the addend's values copied in (start), or from zero
  // (start null), with the last K block's epilogue (epi, else null).
  const auto on_scratch = [&](int64_t rows, int64_t cols, TileOut out, const auto& kernel) {
    HWY_ALIGN float tile[kMr * kNv * hn::MaxLanes(d)];
    HWY_ALIGN float col_bias[kNv * hn::MaxLanes(d)];
    const size_t ld = static_cast<size_t>(nr);
    const float* start = blk.load_c ? out.c : out.addend;
    if (start != nullptr) {
      for (int64_t r = 0; r < rows; ++r) std::memcpy(tile + r * ld, start + r * blk.ldc, cols * sizeof(float));
    }
    if (out.epi.col_bias != nullptr) {
      std::fill(col_bias, col_bias + nr, 0.0f);
      std::memcpy(col_bias, out.epi.col_bias, cols * sizeof(float));
      out.epi.col_bias = col_bias;
    }
    kernel(tile, ld, start != nullptr ? tile : nullptr, blk.last ? &out.epi : nullptr);
    for (int64_t r = 0; r < rows; ++r) std::memcpy(out.c + r * blk.ldc, tile + r * ld, cols * sizeof(float));
  };
  // One tile: rows [i, i + kMr) of A against B strip t.
  const auto run_tile = [&](int64_t i, int64_t t, TilePrefetch prefetch) {
    const int64_t rows = std::min<int64_t>(kMr, blk.m - i);
    const float* a = gather ? blk.a : blk.a + (i / static_cast<int64_t>(kMr)) * blk.a_strip_stride;
    const int64_t* a_rows = gather ? blk.a_row_offsets + i : nullptr;
    const int64_t j = t * nr;
    const int64_t cols = std::min(nr, blk.n - j);
    const int64_t vecs = (cols + lanes - 1) / lanes;
    const bool tail = blk.b_tail != nullptr && t == b_strips - 1;
    const float* b = tail ? blk.b_tail : blk.b + t * blk.b_strip_stride;
    const size_t b_stride = static_cast<size_t>(tail ? nr : blk.b_row_stride);
    const MicroKernelFn fn = table[rows - 1][vecs - 1];
    auto [epi, c, addend] = tile_out(i, j);
#if HWY_TARGET == HWY_AVX3 || HWY_TARGET == HWY_AVX3_DL
    if (cols <= kNarrowMaxCols && !in_place && !gather) {
      static constexpr auto kNarrow = NarrowTable(std::make_index_sequence<kNarrowMaxCols>());
      kNarrow[cols - 1](a, b, b_stride, static_cast<size_t>(blk.kc), static_cast<size_t>(rows), c,
                        static_cast<size_t>(blk.ldc), blk.load_c ? c : addend, blk.last ? &epi : nullptr);
      return;
    }
#endif
    if (cols == vecs * lanes) {
      fn(a, a_rows, blk.a_col_offsets, b, b_stride, blk.b_row_offsets, static_cast<size_t>(blk.kc), c,
         static_cast<size_t>(blk.ldc), blk.load_c ? c : addend, blk.last ? &epi : nullptr, prefetch);
      return;
    }
    on_scratch(rows, cols, TileOut{epi, c, addend},
               [&](float* tile, size_t ld, const float* start, const TileEpilogue* last_epi) {
                 fn(a, a_rows, blk.a_col_offsets, b, b_stride, blk.b_row_offsets, static_cast<size_t>(blk.kc), tile,
                    ld, start, last_epi, prefetch);
               });
  };
  // Row i of C against B's whole strips [0, whole) (float, or 16-bit widened in registers),
  // kRowStrips at a time and the last few in one tile; returns the strips done.
  const auto row_tiles = [&](int64_t i, const float* a, const auto* b, int64_t whole) {
    const size_t strip = static_cast<size_t>(blk.b_strip_stride), row = static_cast<size_t>(blk.b_row_stride);
    int64_t t = 0;
    while (t < whole) {
      const int64_t strips = std::min<int64_t>(kRowStrips, whole - t);
      const auto [epi, c, addend] = tile_out(i, t * nr);
      RowTile(static_cast<size_t>(strips), a, b + t * strip, strip, row, static_cast<size_t>(blk.kc), c,
              blk.load_c ? c : addend, blk.last ? &epi : nullptr);
      t += strips;
    }
    return t;
  };
  if (blk.b_half != nullptr) {
    // One row of C against float16 or bfloat16 weight strips, widened in registers (Sgemm sets
    // b_half only for a packed one-row A): whole strips kRowStrips at a time, the last few in one
    // tile, and the last, partial one on scratch.
    const size_t strip = static_cast<size_t>(blk.b_strip_stride), row = static_cast<size_t>(blk.b_row_stride);
    const size_t kc = static_cast<size_t>(blk.kc);
    const int64_t whole = blk.n / nr;
    auto row_strips = [&](const auto* b) {
      using TB = std::remove_const_t<std::remove_pointer_t<decltype(b)>>;
      const int64_t t = row_tiles(0, blk.a, b, whole);
      if (t < b_strips) {
        on_scratch(1, blk.n - t * nr, tile_out(0, t * nr),
                   [&](float* tile, size_t, const float* start, const TileEpilogue* last_epi) {
                     RowKernel<TB, 1>(blk.a, b + t * strip, strip, row, kc, tile, start, last_epi);
                   });
      }
    };
    if (blk.b_half_bf16) {
      row_strips(reinterpret_cast<const hwy::bfloat16_t*>(blk.b_half));
    } else {
      row_strips(reinterpret_cast<const hwy::float16_t*>(blk.b_half));
    }
    if (blk.rows_done != nullptr) (*blk.rows_done)(blk.row0, 1, blk.col0, blk.n);
    return;
  }
  if (blk.b_outer) {
    // B from memory (weights packed at load, streamed once per run) and an A block that stays in
    // L2: each B strip is read from memory once and used by every A strip while the tiles request
    // the next strip, a share each, spread over their k loops. A-outer order reads each strip from
    // memory in the one tile of the first A strip, at several times the rate the bus delivers, and
    // the tile waits (timed by rdtsc: 2.4x a cache-hot tile). BERT-base's 128-row MatMuls with
    // streamed weights (gemm_benchmark StreamedB) ran 5-10% below the same products on cache-hot
    // weights; in this order they match them at 1 thread (869 -> 816 us for 768 x 768, 3431 ->
    // 3260 and 3495 -> 3255 for the feed-forward pair) and BERT-base ran 6% faster (p50 133 -> 125
    // ms, 1 thread, medians of 5 rounds alternated).
    const int64_t a_strips = (blk.m + kMr - 1) / kMr;
    const size_t step = static_cast<size_t>((nr + a_strips - 1) / a_strips);
    // Rounded up, the last shares may reach past the strip: prefetches of such lines are harmless.
    const int64_t share = static_cast<int64_t>(step) * blk.kc;
    for (int64_t t = 0; t < b_strips; ++t) {
      const float* next = t + 1 < b_strips ? blk.b + (t + 1) * blk.b_strip_stride : blk.next_b;
      for (int64_t s = 0; s < a_strips; ++s) {
        run_tile(s * static_cast<int64_t>(kMr), t, {next != nullptr ? next + s * share : nullptr, step, true});
      }
    }
    return;
  }
  // A half B is widened a few strips at a time (gemm.cc), and the widening waited on memory each time
  // (the half BERT-base's products ran 5-9% slower than the float model's, whose packed weights
  // stream into the tiles while they compute). The next piece's 16-bit strips are requested here
  // instead: tile (row strip s, column strip t > 0) a share s of next strip t - 1, so the requests
  // spread over the whole piece (its last strip is left to the hardware's prefetcher).
  const int64_t a_strips = (blk.m + kMr - 1) / kMr;
  const size_t half_step = static_cast<size_t>((nr / 2 + a_strips - 1) / a_strips);  // floats per k
  const auto next_half = [&](int64_t i, int64_t t) {
    const int64_t share = (i / static_cast<int64_t>(kMr)) * static_cast<int64_t>(half_step) * blk.kc;
    return reinterpret_cast<const float*>(blk.next_half + (t - 1) * blk.next_half_strip_stride) + share;
  };
  for (int64_t i = 0; i < blk.m; i += kMr) {
    const int64_t rows = std::min<int64_t>(kMr, blk.m - i);
    const float* a = gather ? blk.a : blk.a + (i / static_cast<int64_t>(kMr)) * blk.a_strip_stride;
    // The next strip is fetched during the first tile of this one (re-fetching this one, which is
    // cached, on the last strip and the other tiles).
    const float* next_a = i + static_cast<int64_t>(kMr) < blk.m ? a + blk.a_strip_stride : a;
    int64_t t = 0;
    if (rows == 1 && !gather && !in_place) {
      // Whole strips only: the last may be partial or read from the tail copy.
      const bool last_whole = blk.n % nr == 0 && blk.b_tail == nullptr;
      const int64_t whole = last_whole ? b_strips : b_strips - 1;
      // The block's last whole strips in one row tile too. Through the 8-row micro-kernel, the 3
      // strips left over in each of a 2-core split's blocks of 11 took as long as the other 8 (an
      // LSTM's R h, N 2048); as a 3-strip tile, still about twice as long per strip as a 4-strip one.
      t = row_tiles(i, a, blk.b, whole);
    }
    for (; t < b_strips; ++t) {
      // B from memory (weights packed at load, streamed once per run): the first strip of rows
      // brings each B strip in, and the next one is requested while this one runs. BERT-base's
      // MatMuls otherwise wait on one stream of weights for their first pass. (A half piece was
      // just widened into cache: its tiles request the next piece's 16-bit strips instead.)
      const bool first_pass = i == 0 && t + 1 < b_strips && ((gather && blk.next_half == nullptr) || blk.stream_b);
      if (first_pass) {
        run_tile(i, t, {blk.b + (t + 1) * blk.b_strip_stride, static_cast<size_t>(nr), blk.stream_b});
      } else if (blk.next_half != nullptr && t > 0) {
        run_tile(i, t, {next_half(i, t), half_step, false});
      } else {
        run_tile(i, t, {gather ? nullptr : t == 0 ? next_a : a, kMr, false});
      }
    }
    if (blk.rows_done != nullptr) (*blk.rows_done)(blk.row0 + i, rows, blk.col0, blk.n);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_MATH_GEMM_INL_H_
