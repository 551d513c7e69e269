// The integer GEMM driver: packing A, the zero-point terms, blocking and the split over cores. The
// vector code is in qgemm-inl.h.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/math/qgemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/math/qgemm-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <new>

#include "ops/framework/parallel.h"
#include "ops/math/gemm.h"
#include "ops/math/qgemm.h"
#include "ops/math/qgemm_amx.h"

namespace onnxflow {

HWY_EXPORT(RunQBlockImpl);
HWY_EXPORT(QRowsPerTileImpl);
HWY_EXPORT(QTargetHasVnniKernelImpl);
HWY_EXPORT(QPackBImpl);
HWY_EXPORT(QPackARowsImpl);
HWY_EXPORT(QRowSumsImpl);
HWY_EXPORT(QTargetBoundsPairsImpl);

namespace {

// Below this many multiply-adds a GEMM stays on the calling thread.
constexpr int64_t kMinParallelMacs = 1 << 18;
// Rows of A walked against one B strip before the next strip: the rows (kp bytes each) stay in L2
// while the strip (kp * 48 bytes) is reused from L1/L2 by every tile of rows.
constexpr int64_t kABlockBytes = 256 << 10;
// Row blocks are multiples of every target's tile height (8, 6 and 4), or with AMX of its two
// 16-row tiles (a block of 24 rows ran 16 on tiles and 8 on VNNI).
int64_t RowQuantum(bool amx) { return amx ? 32 : 24; }

// Whether a GEMM with kp bytes of K per row runs on AMX tiles: one whole 64-byte chunk at least.
bool AmxFor(int64_t kp) { return kp >= qgemm_amx::kTileK && QGemmUsesAmx(); }

std::atomic<bool> g_vnni_disabled{false};
std::atomic<bool> g_amx_disabled{false};

bool CpuHasVnni() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has = __builtin_cpu_supports("avx512vnni");
  return has;
#else
  return false;
#endif
}

int64_t RoundUp4(int64_t k) { return (k + 3) / 4 * 4; }

// B's zero-point terms for b_zero (b_zero_count values, null: 0): b's kept ones when they were
// made for the same zero points, else made now and kept.
std::shared_ptr<const QZeroTerms> ZeroTermsFor(const QPackedB& b, const int32_t* b_zero, int64_t b_zero_count) {
  const int64_t count = b_zero == nullptr ? 1 : b_zero_count;
  const auto same = [&](const QZeroTerms& t) {
    if (static_cast<int64_t>(t.b_zero.size()) != count) return false;
    return b_zero == nullptr ? t.b_zero[0] == 0 : std::equal(t.b_zero.begin(), t.b_zero.end(), b_zero);
  };
  std::shared_ptr<const QZeroTerms> kept = std::atomic_load(&b.zero_terms);
  if (kept != nullptr && same(*kept)) return kept;
  auto terms = std::make_shared<QZeroTerms>();
  if (b_zero == nullptr) {
    terms->b_zero.assign(1, 0);
  } else {
    terms->b_zero.assign(b_zero, b_zero + count);
  }
  const int64_t n = b.n, n_pad = b.strips() * kQNr;
  terms->zb.assign(n_pad, 0);
  terms->b_term.assign(n_pad, 0);
  for (int64_t j = 0; j < n; ++j) {
    const int32_t z = terms->b_zero[count == 1 ? 0 : j] + b.offset;
    terms->zb[j] = z;
    terms->zb_zero = terms->zb_zero && z == 0;
    terms->b_term[j] = b.col_sums[j] - static_cast<int32_t>(b.k) * z;
  }
  std::shared_ptr<const QZeroTerms> made = std::move(terms);
  std::atomic_store(&b.zero_terms, made);
  return made;
}

// B's per-column terms of the epilogue, padded to whole strips (the epilogue reads a strip's
// columns at once): the zero-point terms (ZeroTermsFor) and the epilogue's column arrays, copied
// with padding unless the caller padded them (QEpilogue::padded_cols).
struct ColumnTerms {
  std::shared_ptr<const QZeroTerms> terms;
  const int32_t* bias_col = nullptr;
  const float* scale_col = nullptr;
  const float* fbias_col = nullptr;

  ColumnTerms(const QPackedB& b, const int32_t* b_zero, int64_t b_zero_count, const QEpilogue& ep)
      : terms(ZeroTermsFor(b, b_zero, b_zero_count)) {
    const int64_t n = b.n, n_pad = b.strips() * kQNr;
    bias_col = Padded(ep.bias_col, ep.padded_cols, n, n_pad, &bias_copy_);
    scale_col = Padded(ep.scale_col, ep.padded_cols, n, n_pad, &scale_copy_);
    fbias_col = Padded(ep.fbias_col, ep.padded_cols, n, n_pad, &fbias_copy_);
  }

  template <typename T>
  static const T* Padded(const T* src, bool padded, int64_t n, int64_t n_pad, std::vector<T>* copy) {
    if (src == nullptr || padded) return src;
    copy->assign(n_pad, T(0));
    std::copy(src, src + n, copy->begin());
    return copy->data();
  }

  // The block every task starts from: B's side, the epilogue and C.
  qgemm_internal::QBlock Block(const QEpilogue& ep, void* c, int64_t ldc, bool vnni) const {
    qgemm_internal::QBlock base;
    base.zb = terms->zb.data();
    base.b_term = terms->b_term.data();
    base.bias_col = bias_col;
    base.scale_col = scale_col;
    base.fbias_col = fbias_col;
    base.kind = ep.kind;
    base.out_scale = ep.out_scale;
    base.out_zero = ep.out_zero;
    base.c = c;
    base.ldc = ldc;
    base.vnni = vnni;
    return base;
  }

 private:
  std::vector<int32_t> bias_copy_;
  std::vector<float> scale_copy_, fbias_copy_;
};

// Points blk's column arrays, B and C at column j0 (the first of strip s0) and row i0.
void AtColumn(qgemm_internal::QBlock* blk, const qgemm_internal::QBlock& base, const QPackedB& b, int64_t s0,
              int64_t s1, int64_t i0, size_t out_size) {
  const int64_t j0 = s0 * kQNr;
  blk->b = reinterpret_cast<const int8_t*>(b.data.get()) + s0 * b.strip_bytes();
  blk->strip_bytes = b.strip_bytes();
  blk->pairs_bounded = b.pairs_bounded;
  blk->fixes = b.fixes.data();
  blk->fix_starts = b.fixes.empty() ? nullptr : b.fix_starts.data() + s0;
  blk->n = std::min(b.n, s1 * kQNr) - j0;
  blk->zb = base.zb + j0;
  blk->b_term = base.b_term + j0;
  blk->bias_col = base.bias_col != nullptr ? base.bias_col + j0 : nullptr;
  blk->scale_col = base.scale_col != nullptr ? base.scale_col + j0 : nullptr;
  blk->fbias_col = base.fbias_col != nullptr ? base.fbias_col + j0 : nullptr;
  blk->c = static_cast<uint8_t*>(base.c) + (i0 * base.ldc + j0) * out_size;
}

// Bounds B's pairs for vpmaddubsw (QPackedB) where this target's kernel reads them that way (AVX2,
// AVX-512 without VNNI) and at most 1 pair in kMaxFixedPairs needs it: each fix is a multiply-add
// per row of every tile apart from the vector products, and a few of them cost less than the exact
// split saves. Real weights, about normal and scaled so the largest is 127, need a few per
// thousand pairs quantized per tensor and none in 7 bits (reduce_range); uniform random bytes
// need one pair in four, and keep the split.
constexpr int64_t kMaxFixedPairs = 256;

// B's bytes as packed: no pairs bounded, no fixes.
void ClearPairBounds(QPackedB* p) {
  p->pairs_bounded = false;
  p->fixes.clear();
  p->fix_starts.clear();
}

void BoundPairs(QPackedB* p) {
  ClearPairBounds(p);
  if (!HWY_DYNAMIC_DISPATCH(QTargetBoundsPairsImpl)() || QGemmUsesVnni()) return;
  int8_t* data = reinterpret_cast<int8_t*>(p->data.get());
  const int64_t bytes = p->strips() * p->strip_bytes();
  int64_t over = 0;
  for (int64_t i = 0; i < bytes; i += 2) over += std::abs(data[i] + data[i + 1]) > 128;
  if (over * kMaxFixedPairs > bytes / 2) return;
  p->pairs_bounded = true;
  p->fixes.reserve(static_cast<size_t>(over));
  p->fix_starts.assign(static_cast<size_t>(p->strips() + 1), 0);
  for (int64_t t = 0; t < p->strips(); ++t) {
    p->fix_starts[t] = static_cast<int64_t>(p->fixes.size());
    int8_t* strip = data + t * p->strip_bytes();
    for (int64_t q = 0; q < p->kp / 4; ++q) {
      for (int64_t j = 0; j < kQNr; ++j) {
        for (int e = 1; e < 4; e += 2) {
          int8_t* pair = strip + (q * kQNr + j) * 4 + e - 1;
          const int sum = pair[0] + pair[1];
          if (std::abs(sum) <= 128) continue;
          const int bounded = (sum > 0 ? 128 : -128) - pair[0];
          p->fixes.push_back({static_cast<int32_t>(4 * q + e), static_cast<int16_t>(j),
                              static_cast<int16_t>(pair[1] - bounded)});
          pair[1] = static_cast<int8_t>(bounded);
        }
      }
    }
  }
  p->fix_starts[p->strips()] = static_cast<int64_t>(p->fixes.size());
}

}  // namespace

void AlignedBytesFree::operator()(uint8_t* p) const { std::free(p); }

AlignedBytes MakeAlignedBytes(int64_t n) {
  const size_t bytes = (static_cast<size_t>(std::max<int64_t>(n, 1)) + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, bytes);
  if (p == nullptr) throw std::bad_alloc();
  return AlignedBytes(static_cast<uint8_t*>(p));
}

bool QGemmUsesVnni() {
  return HWY_DYNAMIC_DISPATCH(QTargetHasVnniKernelImpl)() && CpuHasVnni() && !g_vnni_disabled.load();
}
void QGemmDisableVnniForTest(bool disable) { g_vnni_disabled.store(disable); }
bool QGemmUsesAmx() { return QGemmUsesVnni() && qgemm_amx::Usable() && !g_amx_disabled.load(); }
void QGemmDisableAmxForTest(bool disable) { g_amx_disabled.store(disable); }

QPackedA QPackA(const void* a, bool a_signed, int64_t lda, int64_t m, int64_t k, int threads) {
  QPackedA p;
  p.m = m;
  p.k = k;
  p.kp = RoundUp4(k);
  p.offset = a_signed ? 128 : 0;
  p.data = MakeAlignedBytes(m * p.kp);
  p.row_sums.assign(static_cast<size_t>(m), 0);
  const auto pack = HWY_DYNAMIC_DISPATCH(QPackARowsImpl);
  ParallelFor(threads, m, MacCost(k * 4), [&](int64_t i0, int64_t i1) {
    pack(static_cast<const uint8_t*>(a), a_signed ? 0x80 : 0, lda, k, p.kp, i0, i1, p.data.get(), p.row_sums.data());
  });
  return p;
}

void QPackBInto(const void* b, bool b_signed, int64_t ldb, bool trans, int64_t k, int64_t n, QPackedB* p) {
  const int64_t kp = RoundUp4(k);
  const int64_t strips = (n + kQNr - 1) / kQNr;
  const int64_t need = strips * kp * kQNr;
  const int64_t had = p->data != nullptr ? p->strips() * p->strip_bytes() : 0;
  if (p->data == nullptr || had < need) p->data = MakeAlignedBytes(need);
  p->k = k;
  p->n = n;
  p->kp = kp;
  p->offset = b_signed ? 0 : -128;
  p->col_sums.resize(static_cast<size_t>(strips * kQNr));
  HWY_DYNAMIC_DISPATCH(QPackBImpl)(static_cast<const uint8_t*>(b), !b_signed, ldb, trans, k, n, kp, 0, strips,
                                   reinterpret_cast<int8_t*>(p->data.get()), p->col_sums.data());
  // Not bounded: these are a convolution's unfolded image, packed every run, where the scan would
  // be paid every run too (the dynamic-uint8 ConvInteger CNN ran 1.25x slower on AVX2).
  ClearPairBounds(p);
  p->zero_terms.reset();  // made for the columns packed before
}

QPackedB QPackB(const void* b, bool b_signed, int64_t ldb, bool trans, int64_t k, int64_t n, int threads) {
  QPackedB p;
  p.k = k;
  p.n = n;
  p.kp = RoundUp4(k);
  p.offset = b_signed ? 0 : -128;
  p.data = MakeAlignedBytes(p.strips() * p.strip_bytes());
  p.col_sums.assign(static_cast<size_t>(p.strips() * kQNr), 0);
  const auto pack = HWY_DYNAMIC_DISPATCH(QPackBImpl);
  ParallelFor(threads, p.strips(), MacCost(p.strip_bytes()), [&](int64_t t0, int64_t t1) {
    pack(static_cast<const uint8_t*>(b), !b_signed, ldb, trans, k, n, p.kp, t0, t1,
         reinterpret_cast<int8_t*>(p.data.get()), p.col_sums.data());
  });
  BoundPairs(&p);
  return p;
}

void QGemm(const QPackedA& a, const QPackedB& b, const QZeroPoints& zero, const QEpilogue& ep, void* c, int64_t ldc,
           int threads) {
  const int64_t m = a.m, n = b.n, k = a.k;
  if (m <= 0 || n <= 0) return;
  const bool vnni = QGemmUsesVnni();
  const bool amx = AmxFor(a.kp);
  const int64_t strips = b.strips();

  // Zero points in the stored domain and the per-row / per-column terms of the epilogue.
  std::vector<int32_t> neg_row_sum(m), neg_za(m);
  for (int64_t i = 0; i < m; ++i) {
    const int32_t za = zero.a == nullptr ? 0 : zero.a[zero.a_count == 1 ? 0 : i];
    neg_za[i] = -(za + a.offset);
    neg_row_sum[i] = -a.row_sums[i];
  }
  const ColumnTerms cols(b, zero.b, zero.b_count, ep);
  qgemm_internal::QBlock base = cols.Block(ep, c, ldc, vnni);
  base.amx = amx;
  base.kp = a.kp;
  base.zb_zero = cols.terms->zb_zero;
  base.neg_row_sum = neg_row_sum.data();
  base.neg_za = neg_za.data();
  base.bias_row = ep.bias_row;
  base.scale_row = ep.scale_row;

  // Tasks: blocks of B strips by blocks of rows. Two per core when parallel, N split first (each
  // task then reads only its own strips of the weights).
  const int64_t macs = m * n * std::max<int64_t>(k, 1);
  const int parallel_threads = macs >= kMinParallelMacs ? threads : 1;
  const int64_t want = parallel_threads > 1 ? int64_t{parallel_threads} * 2 : 1;
  const int64_t n_blocks = std::min(strips, want);
  const int64_t quantum = RowQuantum(amx);
  const int64_t row_units = (m + quantum - 1) / quantum;
  const int64_t m_blocks = std::min(row_units, (want + n_blocks - 1) / n_blocks);
  const int64_t rows_per_block = (row_units + m_blocks - 1) / m_blocks * quantum;
  const int64_t a_rows_in_l2 =
      std::max<int64_t>(quantum, kABlockBytes / std::max<int64_t>(a.kp, 1) / quantum * quantum);
  const size_t out_size = qgemm_internal::OutputBytes(ep.kind);
  const auto run = HWY_DYNAMIC_DISPATCH(RunQBlockImpl);
  const int64_t tasks = m_blocks * n_blocks;
  ParallelFor(parallel_threads, tasks, MacCost(macs / tasks), [&](int64_t t0, int64_t t1) {
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t mb = task / n_blocks, nb = task % n_blocks;
      const int64_t s0 = nb * strips / n_blocks, s1 = (nb + 1) * strips / n_blocks;
      const int64_t r_begin = mb * rows_per_block, r_end = std::min(m, r_begin + rows_per_block);
      for (int64_t i0 = r_begin; i0 < r_end; i0 += a_rows_in_l2) {
        qgemm_internal::QBlock blk = base;
        blk.m = std::min(r_end, i0 + a_rows_in_l2) - i0;
        blk.a = a.data.get() + i0 * a.kp;
        blk.neg_row_sum = base.neg_row_sum + i0;
        blk.neg_za = base.neg_za + i0;
        blk.bias_row = base.bias_row != nullptr ? base.bias_row + i0 : nullptr;
        blk.scale_row = base.scale_row != nullptr ? base.scale_row + i0 : nullptr;
        AtColumn(&blk, base, b, s0, s1, i0, out_size);
        run(blk);
      }
    }
  });
}

// Windows pay where a gathered block would serve few runs of 64 columns (its copy is made once
// for all of them). At any width a QDQ ResNet-50 (3x3 layers of 64 to 512 columns) ran 2-4%
// slower at one thread (p50 14.3-14.5 against 13.7-14.3 ms, 3 rounds alternated); up to 128 it
// runs as before, and a QDQ YOLOv8n (16 to 128 columns but two layers) 21.7-22.2 -> 19.6-20.6 ms.
constexpr int64_t kMaxWindowColumns = 128;

void QGemmRows(const QRowsA& a, const QPackedB& b, const int32_t* b_zero, int64_t b_zero_count, const QEpilogue& ep,
               void* c, int64_t ldc, int threads) {
  const int64_t m = a.m, n = b.n, k = a.k, kp = a.kp();
  if (m <= 0 || n <= 0) return;
  const int64_t strips = b.strips();
  const ColumnTerms cols(b, b_zero, b_zero_count, ep);
  const bool amx = AmxFor(kp);
  qgemm_internal::QBlock base = cols.Block(ep, c, ldc, QGemmUsesVnni());
  base.amx = amx;
  base.kp = kp;
  base.bias_row = nullptr;
  base.scale_row = nullptr;
  base.zb_zero = cols.terms->zb_zero;
  // One zero point for every row: -za' * b_term + bias_col is one column vector, added whole.
  const int32_t neg_za = 1;
  const std::vector<int32_t>& b_term = cols.terms->b_term;
  std::vector<int32_t> column_add(b_term.size());
  for (size_t j = 0; j < column_add.size(); ++j) {
    column_add[j] = static_cast<int32_t>(static_cast<uint32_t>(-(a.zero + a.offset)) * static_cast<uint32_t>(b_term[j]) +
                                         static_cast<uint32_t>(cols.bias_col == nullptr ? 0 : cols.bias_col[j]));
  }
  base.b_term = column_add.data();
  base.bias_col = nullptr;
  base.unit_za = true;

  // Tasks: blocks of rows (each made once, by one thread) first; B's strips split only when there
  // are too few rows to go round (a 7x7 map's 49 pixels). A block's rows stay in L2 while every
  // strip of the task passes them.
  const int64_t macs = m * n * std::max<int64_t>(k, 1);
  const int parallel_threads = macs >= kMinParallelMacs ? threads : 1;
  const int64_t want = parallel_threads > 1 ? int64_t{parallel_threads} * 4 : 1;
  const int64_t quantum = RowQuantum(amx);
  const int64_t row_units = (m + quantum - 1) / quantum;
  const int64_t rows_in_l2 = std::max<int64_t>(1, (kABlockBytes / 2) / std::max<int64_t>(kp, 1) / quantum);
  const int64_t units_per_block = std::max<int64_t>(1, std::min(rows_in_l2, (row_units + want - 1) / want));
  const int64_t m_blocks = (row_units + units_per_block - 1) / units_per_block;
  const int64_t n_blocks = std::min(strips, (want + m_blocks - 1) / m_blocks);
  const int64_t rows_per_block = units_per_block * quantum;
  const size_t out_size = qgemm_internal::OutputBytes(ep.kind);
  const auto run = HWY_DYNAMIC_DISPATCH(RunQBlockImpl);
  const auto row_sums = HWY_DYNAMIC_DISPATCH(QRowSumsImpl);
  const int64_t tasks = m_blocks * n_blocks;
  // Windows read in place (QRowSource::Windows) by the VNNI requantizing tiles, which need no row
  // sums when B's zero point is 0: the rows are not gathered first, a copy of up to 9 times the
  // image (a QDQ YOLOv8n spent 18% of its time gathering its 3x3 convolutions' rows).
  const bool windows = a.source->HasWindows() && base.vnni && !amx && cols.terms->zb_zero && n <= kMaxWindowColumns &&
                       (ep.kind == QOutput::kUint8 || ep.kind == QOutput::kInt8);
  ParallelFor(parallel_threads, tasks, MacCost(macs / tasks), [&](int64_t t0, int64_t t1) {
    thread_local std::vector<uint8_t> scratch;
    thread_local std::vector<int32_t> neg_row_sum, neg_za_rows;
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t mb = task / n_blocks, nb = task % n_blocks;
      const int64_t s0 = nb * strips / n_blocks, s1 = (nb + 1) * strips / n_blocks;
      const int64_t i0 = mb * rows_per_block, rows = std::min(m, i0 + rows_per_block) - i0;
      int64_t lda = kp;
      const uint8_t* rows_a = nullptr;
      if (scratch.size() < static_cast<size_t>(rows * kp + kRowSlack)) scratch.resize(rows * kp + kRowSlack);
      if (!windows) rows_a = a.source->Rows(i0, rows, scratch.data(), &lda);
      neg_row_sum.assign(rows, 0);
      neg_za_rows.assign(rows, neg_za);
      if (!cols.terms->zb_zero) {
        row_sums(rows_a, lda, rows, k, neg_row_sum.data());
        for (int64_t i = 0; i < rows; ++i) neg_row_sum[i] = -neg_row_sum[i];
      }
      qgemm_internal::QBlock blk = base;
      blk.m = rows;
      blk.a = rows_a;
      blk.lda = lda;
      if (windows) {
        blk.source = a.source;
        blk.source_row0 = i0;
        blk.scratch = scratch.data();
      }
      blk.neg_row_sum = neg_row_sum.data();
      blk.neg_za = neg_za_rows.data();
      AtColumn(&blk, base, b, s0, s1, i0, out_size);
      run(blk);
    }
  });
}

void QGemmReference(int64_t m, int64_t n, int64_t k, const void* a, bool a_signed, int64_t lda, const void* b,
                    bool b_signed, int64_t ldb, bool trans_b, const QZeroPoints& zero, const QEpilogue& ep, void* c,
                    int64_t ldc) {
  auto at = [](const void* p, bool s, int64_t idx) -> int32_t {
    return s ? static_cast<const int8_t*>(p)[idx] : static_cast<const uint8_t*>(p)[idx];
  };
  for (int64_t i = 0; i < m; ++i) {
    const int32_t za = zero.a == nullptr ? 0 : zero.a[zero.a_count == 1 ? 0 : i];
    for (int64_t j = 0; j < n; ++j) {
      const int32_t zb = zero.b == nullptr ? 0 : zero.b[zero.b_count == 1 ? 0 : j];
      int64_t sum = 0;
      for (int64_t kk = 0; kk < k; ++kk) {
        sum += int64_t{at(a, a_signed, i * lda + kk) - za} *
               (at(b, b_signed, trans_b ? j * ldb + kk : kk * ldb + j) - zb);
      }
      int32_t v = static_cast<int32_t>(sum);
      if (ep.bias_row != nullptr) v += ep.bias_row[i];
      if (ep.bias_col != nullptr) v += ep.bias_col[j];
      const float s = (ep.scale_row != nullptr ? ep.scale_row[i] : 1.0f) * (ep.scale_col != nullptr ? ep.scale_col[j] : 1.0f);
      switch (ep.kind) {
        case QOutput::kInt32: static_cast<int32_t*>(c)[i * ldc + j] = v; break;
        case QOutput::kFloat:
          static_cast<float*>(c)[i * ldc + j] =
              static_cast<float>(v) * s + (ep.fbias_col != nullptr ? ep.fbias_col[j] : 0.0f);
          break;
        case QOutput::kUint8:
        case QOutput::kInt8: {
          const float r = std::nearbyint(static_cast<float>(v) * (s / ep.out_scale)) + static_cast<float>(ep.out_zero);
          if (ep.kind == QOutput::kUint8) {
            static_cast<uint8_t*>(c)[i * ldc + j] = static_cast<uint8_t>(std::min(255.0f, std::max(0.0f, r)));
          } else {
            static_cast<int8_t*>(c)[i * ldc + j] = static_cast<int8_t>(std::min(127.0f, std::max(-128.0f, r)));
          }
          break;
        }
      }
    }
  }
}

}  // namespace onnxflow

#endif  // HWY_ONCE
