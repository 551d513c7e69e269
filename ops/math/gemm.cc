// The GEMM driver: packing, blocking and the split over cores. The vector code is in gemm-inl.h.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/math/gemm.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/math/gemm-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <vector>

#include <sys/mman.h>

#include "ops/framework/parallel.h"
#include "ops/math/gemm.h"
#include "ops/math/gemm_block.h"

namespace onnxflow {

HWY_EXPORT(GemmTileImpl);
HWY_EXPORT(RunBlockImpl);
HWY_EXPORT(ApplyActivationImpl);

namespace {

// K block: an 8 x 256 A micro-panel is 8 KiB (L1 holds it next to the B rows streaming by).
constexpr int64_t kKc = 256;
// Budget for one B block (kKc x NC floats) in the 2 MiB L2, leaving room for C and A.
constexpr int64_t kL2BlockFloats = (1 << 20) / sizeof(float);
// Up to this many rows of C, B is read in place rather than packed.
constexpr int64_t kRawBMaxRows = 16;
// Up to this many columns of C, A is read in place rather than packed: a few strips of B columns
// use each element of A too few times to repay packing it (M 1024, N 64, K 4096 on one core: 69 ->
// 88 GFLOP/s). On several cores, packing also leaves half of the packed A in the other core's cache
// for it to fetch, which costs more than packing saves up to 1024 columns when A has at most 512
// rows (M 128, N 768, K 768 on two: 183 -> 209; M 256, N 1024, K 1024: 144 -> 180); one core
// does not pay it (there, K 3072 with 768 columns is 5% faster packed), nor do taller A's
// (1024^3 is 5% faster packed).
constexpr int64_t kInPlaceAMaxCols = 288;
constexpr int64_t kInPlaceAMaxColsParallel = 1024;
constexpr int64_t kInPlaceAMaxRowsParallel = 512;
// Below this many multiply-adds a GEMM stays on the calling thread.
constexpr int64_t kMinParallelMacs = 1 << 18;

}  // namespace

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Freed AlignedFloats of at least kMinKept bytes kept for reuse, up to kMaxRetained bytes (a few
// dozen buffers: a linear search is enough). A request takes the smallest kept buffer that fits it
// without wasting more than half (a GEMM's block sizes repeat run after run). Small buffers are
// left to malloc, which recycles them without new mappings.
class FloatsFreeList {
 public:
  static constexpr size_t kMinKept = size_t{64} << 10;

  static FloatsFreeList& Global() {
    static FloatsFreeList* list = new FloatsFreeList();  // never destroyed: kernels may outlive main()
    return *list;
  }

  void* Take(size_t bytes) {
    if (bytes < kMinKept) return nullptr;
    std::lock_guard<std::mutex> lock(mutex_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->bytes >= bytes && it->bytes <= 2 * bytes && (best == kept_.end() || it->bytes < best->bytes)) best = it;
    }
    if (best == kept_.end()) return nullptr;
    void* p = best->ptr;
    retained_ -= best->bytes;
    kept_.erase(best);
    return p;
  }

  void Release() {
    std::vector<Kept> kept;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      kept.swap(kept_);
      retained_ = 0;
    }
    for (const Kept& k : kept) std::free(k.ptr);
  }

  // Keeps the buffer, or returns false when the list is full (the caller frees it).
  bool Give(void* p, size_t bytes) {
    if (bytes < kMinKept) return false;
    std::lock_guard<std::mutex> lock(mutex_);
    if (retained_ + bytes > kMaxRetained) return false;
    retained_ += bytes;
    kept_.push_back({p, bytes});
    return true;
  }

 private:
  static constexpr size_t kMaxRetained = size_t{64} << 20;
  struct Kept {
    void* ptr;
    size_t bytes;
  };
  std::mutex mutex_;
  std::vector<Kept> kept_;
  size_t retained_ = 0;
};

}  // namespace

void ReleaseAlignedFloats() { FloatsFreeList::Global().Release(); }

void AlignedFloatsFree::operator()(float* p) const {
  if (!FloatsFreeList::Global().Give(p, bytes)) std::free(p);
}

AlignedFloats AlignedFloats::Make(int64_t n, bool zero) {
  AlignedFloats out;
  size_t bytes = static_cast<size_t>(std::max<int64_t>(n, 1)) * sizeof(float);
  // Packed weights and big blocks are streamed once per use: on 4 KiB pages the hardware
  // prefetcher restarts at every page and the TLB misses; 2 MiB pages avoid both.
  const bool huge = bytes >= kHugePage;
  const size_t align = huge ? kHugePage : 64;
  bytes = (bytes + align - 1) / align * align;
  void* p = FloatsFreeList::Global().Take(bytes);
  if (p == nullptr) {
    p = std::aligned_alloc(align, bytes);
    if (p == nullptr) throw std::bad_alloc();
    if (huge) madvise(p, bytes, MADV_HUGEPAGE);
  }
  out.ptr = std::unique_ptr<float[], Free>(static_cast<float*>(p), Free{bytes});
  if (zero) std::memset(out.ptr.get(), 0, bytes);
  out.size = n;
  return out;
}

Result<ActivationSpec> ParseActivation(const std::string& name, bool has_alpha, float alpha, bool has_beta,
                                       float beta) {
  ActivationSpec spec;
  if (name.empty() || name == "None" || name == "none") return spec;
  if (name == "Relu") {
    spec.kind = Activation::kRelu;
  } else if (name == "LeakyRelu") {
    spec.kind = Activation::kLeakyRelu;
    spec.alpha = has_alpha ? alpha : 0.01f;
  } else if (name == "Clip") {
    spec.kind = Activation::kClip;
    spec.alpha = has_alpha ? alpha : -INFINITY;
    spec.beta = has_beta ? beta : INFINITY;
  } else if (name == "Sigmoid") {
    spec.kind = Activation::kSigmoid;
  } else if (name == "Tanh") {
    spec.kind = Activation::kTanh;
  } else if (name == "HardSigmoid") {
    spec.kind = Activation::kHardSigmoid;
    spec.alpha = has_alpha ? alpha : 0.2f;
    spec.beta = has_beta ? beta : 0.5f;
  } else if (name == "Swish") {
    spec.kind = Activation::kSwish;
  } else if (name == "Gelu") {
    spec.kind = Activation::kGelu;
  } else {
    return InvalidArgument("unknown fused activation '" + name + "'");
  }
  return spec;
}

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
    case Activation::kRelu: return x > 0.0f ? x : 0.0f;
    case Activation::kLeakyRelu: return x < 0.0f ? x * spec.alpha : x;
    case Activation::kClip: return std::min(std::max(x, spec.alpha), spec.beta);
    case Activation::kSigmoid: return 1.0f / (1.0f + std::exp(-x));
    case Activation::kTanh: return std::tanh(x);
    case Activation::kHardSigmoid: return std::min(std::max(x * spec.alpha + spec.beta, 0.0f), 1.0f);
    case Activation::kSwish: return x / (1.0f + std::exp(-x));
    case Activation::kGelu: return 0.5f * x * (1.0f + std::erf(x * 0.70710678118654752440f));
  }
  return x;
}

GemmTileShape GemmTile() {
  // Not cached: tests switch CPU targets, and a dispatched call costs a table lookup.
  return HWY_DYNAMIC_DISPATCH(GemmTileImpl)();
}

void ParallelRange(int threads, int64_t n, int64_t cost_per_item,
                   const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  if (threads <= 1 || n == 1 || n * std::max<int64_t>(cost_per_item, 1) < 2 * kMinParallelMacs) {
    body(0, n);
    return;
  }
  // A few chunks per core (ops/framework/parallel.h), never one task per item: split to single
  // items, the quantization of a 128 x 3072 activation became 393,216 TBB tasks, and the int8 BERT
  // encoder ran 3.7x slower on two cores than on one (269 ms against 72 ms; TBB's task allocation
  // and spawning took a third of the profile).
  ParallelFor(threads, n, cost_per_item, body);
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
  ParallelRange(threads, p.strips(), k * mr, [&](int64_t s0, int64_t s1) {
    for (int64_t s = s0; s < s1; ++s) {
      float* dst = p.data.get() + s * p.strip_size();
      const int64_t rows = std::min(mr, m - s * mr);
      if (rows < mr) std::fill(dst, dst + p.strip_size(), 0.0f);
      if (!trans) {
        // Walk the strip's rows side by side so the packed strip is written front to back.
        const float* src[16];
        for (int64_t r = 0; r < mr; ++r) src[r] = a + (s * mr + std::min(r, rows - 1)) * lda;
        for (int64_t kk = 0; kk < k; ++kk) {
          float* d = dst + kk * mr;
          for (int64_t r = 0; r < rows; ++r) d[r] = src[r][kk] * scale;
        }
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
      for (int64_t j = 0; j < cols; ++j) {
        const float* src = b_ + (j0 + j) * ldb_ + k0;
        for (int64_t kk = 0; kk < kc; ++kk) dst[kk * nr + j] = src[kk];
      }
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

// Each thread's buffer for the B block it is working on; grows to the largest block seen.
thread_local AlignedFloats tls_block;

}  // namespace

PackedB PackB(const float* b, int64_t ldb, bool trans, int64_t k, int64_t n, int threads) {
  PackedB p;
  p.k = k;
  p.n = n;
  p.nr = GemmTile().nr;
  p.data = AlignedFloats::Make(p.strips() * p.strip_size(), /*zero=*/false);  // strips zero their own padding
  ParallelRange(threads, p.strips(), k * p.nr, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) PackBStrip(b, ldb, trans, k, n, p.nr, t, p.data.get() + t * p.strip_size());
  });
  return p;
}

void Sgemm(int64_t m, int64_t n, int64_t k, const GemmInputA& a, const GemmInputB& b, float* c, int64_t ldc,
           const GemmEpilogue& epilogue, int threads) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {  // no products: C = act([C] + biases)
    for (int64_t i = 0; i < m; ++i) {
      float* row = c + i * ldc;
      for (int64_t j = 0; j < n; ++j) {
        float v = epilogue.accumulate ? row[j] : epilogue.addend != nullptr ? epilogue.addend[i * ldc + j] : 0.0f;
        if (epilogue.row_bias != nullptr) v += epilogue.row_bias[i];
        if (epilogue.col_bias != nullptr) v += epilogue.col_bias[j];
        row[j] = ActivationScalar(epilogue.activation, v);
      }
    }
    if (epilogue.block_done) epilogue.block_done(0, m, 0, n);
    return;
  }
  const GemmTileShape tile = GemmTile();
  const int64_t mr = tile.mr, nr = tile.nr;
  const int64_t macs = m * n * k;
  const int parallel_threads = macs >= kMinParallelMacs ? threads : 1;

  PackedA local_a;
  const PackedA* pa = a.packed;
  GemmInputA in_place_a;
  std::vector<int64_t> a_row_starts, a_columns;
  const GemmInputA* ga = &a;  // A as the blocks read it: gathered when gather_base is set
  const bool few_uses_of_a = n <= kInPlaceAMaxCols || (parallel_threads > 1 && n <= kInPlaceAMaxColsParallel &&
                                                        m <= kInPlaceAMaxRowsParallel);
  if (pa == nullptr && a.gather_base == nullptr && b.source == nullptr && !a.trans && a.scale == 1.0f &&
      few_uses_of_a && m >= mr) {
    // The kernel reads A's rows in place, the way it reads an image's pixels. B must be a matrix:
    // the in-place A and B kernels are separate.
    a_row_starts.resize(static_cast<size_t>(m));
    for (int64_t i = 0; i < m; ++i) a_row_starts[i] = i * a.ld;
    a_columns.resize(static_cast<size_t>(k));
    for (int64_t kk = 0; kk < k; ++kk) a_columns[kk] = kk;
    in_place_a.gather_base = a.data;
    in_place_a.gather_rows = a_row_starts.data();
    in_place_a.gather_cols = a_columns.data();
    ga = &in_place_a;
  }
  const bool gather_a = ga->gather_base != nullptr;
  if (pa == nullptr && !gather_a) {
    local_a = PackA(a.data, a.ld, a.trans, m, k, a.scale, parallel_threads);
    pa = &local_a;
  }

  // B: packed if given packed; read in place when row-major, untransposed and M is small (packing
  // would cost as much as the product; only the partial last strip is copied); otherwise packed
  // here, because strided rows of a wide B thrash L1 sets and TLB (~25% slower in place).
  const PackedB* pb = b.source == nullptr ? b.packed : nullptr;
  AlignedFloats b_tail;
  const bool raw_b = pb == nullptr && b.source == nullptr && !b.trans && m <= kRawBMaxRows;
  // Otherwise an unpacked B is packed one block at a time inside each task (below).
  // A source whose rows are contiguous runs (a stride-1 convolution's padded image) is read in
  // place, each k row at its own offset: no packing copy (3x3 convolutions on 56x56 maps 20%
  // faster). A matrix is still packed: read in place, its long rows were slower (L1 sets, TLB).
  const int64_t* in_place_offsets = nullptr;
  const float* in_place_base =
      pb == nullptr && b.source != nullptr ? b.source->InPlaceRows(&in_place_offsets) : nullptr;
  const bool pack_blocks = pb == nullptr && !raw_b && in_place_base == nullptr;
  const MatrixPanelSource matrix_source(b.data, b.ld, b.trans);
  const BPanelSource* source = b.source != nullptr ? b.source : &matrix_source;
  const int64_t n_strips = (n + nr - 1) / nr;
  if (raw_b && n % nr != 0) {
    b_tail = AlignedFloats::Make(k * nr);
    PackBStrip(b.data, b.ld, false, k, n, nr, n_strips - 1, b_tail.get());
  }

  // Blocking: K in near-equal blocks of at most kKc; N in blocks whose B block fits L2; then
  // enough tiles of C for the cores.
  const int64_t k_blocks = (k + kKc - 1) / kKc;
  const int64_t kc_max = (k + k_blocks - 1) / k_blocks;
  const int64_t m_strips = (m + mr - 1) / mr;
  int64_t nc_strips = std::max<int64_t>(1, std::min(n_strips, kL2BlockFloats / (kc_max * nr)));
  int64_t n_blocks = (n_strips + nc_strips - 1) / nc_strips;
  // Blocks of equal width, and as many per core: 64 strips under a 21-strip bound were 21, 21, 21
  // and 1, so one core of two did 42 strips while the other did 22 (a 128 x 3072 x 768 MatMul,
  // BERT's FFN, ran at 68% of two cores).
  if (parallel_threads > 1 && n_blocks % parallel_threads != 0 && n_strips >= 2 * parallel_threads) {
    n_blocks += parallel_threads - n_blocks % parallel_threads;
  }
  nc_strips = (n_strips + n_blocks - 1) / n_blocks;
  n_blocks = (n_strips + nc_strips - 1) / nc_strips;
  // Two tasks per core: enough to even out unequal edge blocks, few enough that a B block packed by
  // each task is packed only a few times. (Packing a matrix B once for all tasks and sharing it made
  // every core read blocks packed in the other core's cache: 5-25% slower per conv.)
  const int64_t want = parallel_threads > 1 ? int64_t{parallel_threads} * 2 : 1;
  if (n_blocks < want && n_strips >= 4) {
    // Split N first (blocks of at least 2 strips): a task then packs only its own B columns,
    // where splitting M would pack the same B block once per task.
    n_blocks = std::min(want, n_strips / 2);
    nc_strips = (n_strips + n_blocks - 1) / n_blocks;
    n_blocks = (n_strips + nc_strips - 1) / nc_strips;
  }
  int64_t m_blocks = std::min(m_strips, (want + n_blocks - 1) / n_blocks);
  if (m_blocks * n_blocks < want) {
    n_blocks = std::min(n_strips, (want + m_blocks - 1) / m_blocks);
    nc_strips = (n_strips + n_blocks - 1) / n_blocks;
    n_blocks = (n_strips + nc_strips - 1) / nc_strips;
  }
  const int64_t mc_strips = (m_strips + m_blocks - 1) / m_blocks;
  m_blocks = (m_strips + mc_strips - 1) / mc_strips;

  // Several tasks over the same columns of an unfolded image (a strided convolution on a small map,
  // N too narrow to split) would each unfold the same B blocks: unfold B once instead, split over
  // the cores, and let every task read it. (Unfolding costs more than reading a block packed on the
  // other core: 3x3 stride 2 on 14x14, 512 channels, 2 threads 1.81 -> 1.37 ms. A matrix B packs
  // with plain copies and stays per task.)
  PackedB shared_b;
  if (pack_blocks && m_blocks > 1 && b.source != nullptr) {
    shared_b.k = k;
    shared_b.n = n;
    shared_b.nr = nr;
    shared_b.data = AlignedFloats::Make(n_strips * k * nr, /*zero=*/false);
    const int64_t k_chunks = (k + kKc - 1) / kKc;
    ParallelRange(parallel_threads, n_strips * k_chunks, kKc * nr, [&](int64_t t0, int64_t t1) {
      for (int64_t t = t0; t < t1; ++t) {
        const int64_t strip = t / k_chunks, k0 = (t % k_chunks) * kKc, kc = std::min(kKc, k - k0);
        source->PackBlock(k0, kc, strip * nr, std::min(nr, n - strip * nr), nr,
                          shared_b.data.get() + strip * shared_b.strip_size() + k0 * nr);
      }
    });
    pb = &shared_b;
  }
  const bool pack_each_block = pack_blocks && pb == nullptr;

  const auto run_block = HWY_DYNAMIC_DISPATCH(RunBlockImpl);
  const int64_t tasks = m_blocks * n_blocks;
  ParallelRange(parallel_threads, tasks, macs / tasks, [&](int64_t t0, int64_t t1) {
    for (int64_t task = t0; task < t1; ++task) {
      const int64_t mb = task / n_blocks, nb = task % n_blocks;
      const int64_t i0 = mb * mc_strips * mr;
      const int64_t rows = std::min(m, i0 + mc_strips * mr) - i0;
      // Blocks of strips as equal as they come (17 strips in 4 blocks are 4, 4, 4 and 5, not 5, 5,
      // 5 and 2, which left one of two cores idle for 3 strips in 20: M 128, N 784, K 1152 on two).
      const int64_t s0 = nb * n_strips / n_blocks, s1 = (nb + 1) * n_strips / n_blocks;
      const int64_t j0 = s0 * nr;
      const int64_t cols = std::min(n, s1 * nr) - j0;
      const bool has_tail = b_tail.get() != nullptr && s1 >= n_strips;
      for (int64_t kb = 0; kb < k_blocks; ++kb) {
        const int64_t k0 = kb * kc_max;
        const int64_t kc = std::min(kc_max, k - k0);
        gemm_internal::GemmBlock blk;
        if (gather_a) {
          blk.a = ga->gather_base;
          blk.a_row_offsets = ga->gather_rows + i0;
          blk.a_col_offsets = ga->gather_cols + k0;
        } else {
          blk.a = pa->data.get() + (i0 / mr) * pa->strip_size() + k0 * mr;
          blk.a_strip_stride = pa->strip_size();
        }
        blk.m = rows;
        if (pack_each_block) {
          const int64_t strips = (cols + nr - 1) / nr;
          if (tls_block.size < strips * kc * nr) tls_block = AlignedFloats::Make(strips * kc * nr, false);
          source->PackBlock(k0, kc, j0, cols, nr, tls_block.get());
          blk.b = tls_block.get();
          blk.b_strip_stride = kc * nr;
          blk.b_row_stride = nr;
        } else if (in_place_base != nullptr) {
          blk.b = in_place_base + j0;
          blk.b_strip_stride = nr;
          blk.b_row_offsets = in_place_offsets + k0;
        } else if (raw_b) {
          blk.b = b.data + k0 * b.ld + j0;
          blk.b_strip_stride = nr;
          blk.b_row_stride = b.ld;
          blk.b_tail = has_tail ? b_tail.get() + k0 * nr : nullptr;
        } else {
          blk.b = pb->data.get() + s0 * pb->strip_size() + k0 * nr;
          blk.b_strip_stride = pb->strip_size();
          blk.b_row_stride = nr;
        }
        blk.n = cols;
        blk.kc = kc;
        blk.c = c + i0 * ldc + j0;
        blk.ldc = ldc;
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
        run_block(blk);
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
