// The GEMM's blocking rules, each with the measurement that set it.
#include "ops/math/gemm_plan.h"

#include <algorithm>
#include <sstream>

#include <unistd.h>

namespace onnxflow {
namespace {

// K block: an 8 x 256 A micro-panel is 8 KiB (L1 holds it next to the B rows streaming by).
constexpr int64_t kKc = 256;
// Budget for one B block (kKc x NC floats): half the core's L2, leaving room for the A strips, C
// and the next block's lines. The whole 1 MiB L2 of a Zen 5 core (a budget set on a 2 MiB-L2
// machine) let BERT-base's MatMuls miss L2 on every pass over the block: half ran them 4% faster
// (p50 145-162 vs 152-168 ms, 4 rounds alternated).
int64_t L2BlockFloats() {
  static const int64_t floats = [] {
    const long l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
    const int64_t bytes = l2 >= (64 << 10) && l2 <= (64 << 20) ? l2 : (1 << 20);
    return bytes / 2 / static_cast<int64_t>(sizeof(float));
  }();
  return floats;
}
// Up to this many rows of C, B is read in place rather than packed.
constexpr int64_t kRawBMaxRows = 16;
// Up to this many columns of C, A is read in place rather than packed: a few strips of B columns
// use each element of A too few times to repay packing it (M 1024, N 64, K 4096 on one core: 69 ->
// 88 GFLOP/s). On several cores, packing also leaves half of the packed A in the other core's cache
// for it to fetch, which costs more than packing saves up to 1024 columns when A has at most 512
// rows (M 128, N 768, K 768 on two: 183 -> 209; M 256, N 1024, K 1024: 144 -> 180); one core
// does not pay it (there, K 3072 with 768 columns is 5% faster packed), nor do taller A's
// (1024^3 is 5% faster packed).
// Against a source packed block by block (a half B widened four strips at a time), one core reads
// A in place up to the same bounds as several: packing A only added a copy of it (ViT-S float16 on
// one core, p50 51.8 -> 51.2 ms over 4 rounds alternated, peak RSS 65.2 -> 63.7 MB; BERT-base
// float16 125-127 -> 124-125 ms).
constexpr int64_t kInPlaceAMaxCols = 288;
constexpr int64_t kInPlaceAMaxColsParallel = 1024;
constexpr int64_t kInPlaceAMaxRowsParallel = 512;
// A 16-bit A or C (a float16 model's stored activations) costs each task scratch of its rows by its
// K block or by its columns, in float: tasks of at most this many floats of either (128 KiB), so
// two cores' scratch stays below what storing ViT-S's 197 x 1536 feed-forward activation in half
// saves (0.6 MB).
constexpr int64_t kHalfTileFloats = 32 << 10;
// Below this many multiply-adds a GEMM stays on the calling thread.
constexpr int64_t kMinParallelMacs = 1 << 18;

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

const char* Name(GemmPlan::APath a) {
  switch (a) {
    case GemmPlan::APath::kPacked: return "packed";
    case GemmPlan::APath::kPackHere: return "pack-here";
    case GemmPlan::APath::kGathered: return "gathered";
    case GemmPlan::APath::kInPlace: return "in-place";
    case GemmPlan::APath::kWidenRows: return "widen-rows";
  }
  return "?";
}

const char* Name(GemmPlan::BPath b) {
  switch (b) {
    case GemmPlan::BPath::kPacked: return "packed";
    case GemmPlan::BPath::kRaw: return "raw";
    case GemmPlan::BPath::kSourceInPlace: return "source-in-place";
    case GemmPlan::BPath::kPackShared: return "pack-shared";
    case GemmPlan::BPath::kPackEachBlock: return "pack-each-block";
  }
  return "?";
}

}  // namespace

GemmPlan MakeGemmPlan(const GemmShape& s) {
  GemmPlan p;
  p.shape = s;
  p.mr = s.tile.mr;
  p.nr = s.tile.nr;
  const int64_t m = s.m, n = s.n, k = s.k, mr = p.mr, nr = p.nr;
  const int64_t l2_block_floats = s.l2_block_floats > 0 ? s.l2_block_floats : L2BlockFloats();
  if (m <= 0 || n <= 0 || k <= 0) {
    p.no_products = true;
    return p;
  }
  p.threads = m * n * k >= kMinParallelMacs ? std::max(s.threads, 1) : 1;
  const int threads = p.threads;

  using A = GemmShape::A;
  using B = GemmShape::B;
  // The in-place A kernel reads B as packed strips: a matrix's, or a source's packed block by block
  // (a half model's weights widened there). Not a source read in place: the two kernels are separate.
  // Packing all of A for a half B held a second copy of A (ViT-S float16's 197 x 1536 feed-forward
  // input, 1.2 MB, at the run's peak).
  const bool b_strips = s.b != B::kSourceInPlace;
  const bool few_uses_of_a =
      n <= kInPlaceAMaxCols ||
      ((threads > 1 || s.b == B::kSource) && n <= kInPlaceAMaxColsParallel && m <= kInPlaceAMaxRowsParallel);
  switch (s.a) {
    case A::kPacked: p.a = GemmPlan::APath::kPacked; break;
    case A::kGathered: p.a = GemmPlan::APath::kGathered; break;
    case A::kMatrix:
      // The kernel reads A's rows in place, the way it reads an image's pixels.
      p.a = b_strips && !s.a_trans && !s.a_scaled && few_uses_of_a && m >= mr ? GemmPlan::APath::kInPlace
                                                                               : GemmPlan::APath::kPackHere;
      break;
    case A::kHalfMatrix:
      // Each task widens its rows of each K block and reads them in place; fewer rows than a strip
      // (a decoder's step) are widened whole and packed, which costs nothing there.
      p.a = b_strips && !s.a_trans && !s.a_scaled && m >= mr ? GemmPlan::APath::kWidenRows
                                                             : GemmPlan::APath::kPackHere;
      break;
  }
  // B: packed if given packed; read in place when row-major, untransposed and M is small (packing
  // would cost as much as the product; only the partial last strip is copied); otherwise packed
  // here, because strided rows of a wide B thrash L1 sets and TLB (~25% slower in place).
  // A source whose rows are contiguous runs (a stride-1 convolution's padded image) is read in
  // place, each k row at its own offset: no packing copy (3x3 convolutions on 56x56 maps 20%
  // faster). A matrix is still packed: read in place, its long rows were slower (L1 sets, TLB).
  if (s.b == B::kPacked) {
    p.b = GemmPlan::BPath::kPacked;
  } else if (s.b == B::kMatrix && !s.b_trans && m <= kRawBMaxRows) {
    p.b = GemmPlan::BPath::kRaw;
    p.b_tail = n % nr != 0;
  } else if (s.b == B::kSourceInPlace) {
    p.b = GemmPlan::BPath::kSourceInPlace;
  } else {
    p.b = GemmPlan::BPath::kPackEachBlock;  // or kPackShared, below
  }

  // Blocking: K in near-equal blocks of at most kKc; N in blocks whose B block fits L2; then
  // enough tiles of C for the cores.
  p.k_blocks = CeilDiv(k, kKc);
  p.kc = CeilDiv(k, p.k_blocks);
  p.m_strips = CeilDiv(m, mr);
  const int64_t n_strips = p.n_strips = CeilDiv(n, nr);
  // One row of A reads each packed B strip once: no block is reused, so none needs to fit L2, and
  // whole-width blocks keep the row tile's groups of strips together (blocks of 5 strips left
  // one in five to a single-strip tile, twice as slow per strip: an LSTM's R h per slice).
  const bool single_row_packed = m == 1 && p.b == GemmPlan::BPath::kPacked;
  int64_t nc_strips =
      single_row_packed ? n_strips : std::max<int64_t>(1, std::min(n_strips, l2_block_floats / (p.kc * nr)));
  int64_t n_blocks = CeilDiv(n_strips, nc_strips);
  // Blocks of equal width, and as many per core: 64 strips under a 21-strip bound were 21, 21, 21
  // and 1, so one core of two did 42 strips while the other did 22 (a 128 x 3072 x 768 MatMul,
  // BERT's FFN, ran at 68% of two cores).
  if (threads > 1 && n_blocks % threads != 0 && n_strips >= 2 * threads) n_blocks += threads - n_blocks % threads;
  nc_strips = CeilDiv(n_strips, n_blocks);
  n_blocks = CeilDiv(n_strips, nc_strips);
  // Two tasks per core: enough to even out unequal edge blocks, few enough that a B block packed by
  // each task is packed only a few times. (Packing a matrix B once for all tasks and sharing it made
  // every core read blocks packed in the other core's cache: 5-25% slower per conv.) One row of A
  // takes one block per core instead: its row tile reads up to 8 strips side by side, and a core
  // reads memory faster from 8 streams than from 4 (two cores here 28-30 against 26-27 GB/s), while
  // two blocks per core cut a 768-column product into 4-strip tiles. GPT-2-small's step at two threads spent
  // 13.1-14.0 ms in its Gemms against 13.2-14.8 (median 13.4 against 14.3, 5 runs alternated).
  const int64_t want = threads > 1 ? int64_t{threads} * (single_row_packed ? 1 : 2) : 1;
  if (n_blocks < want && n_strips >= 4) {
    // Split N first (blocks of at least 2 strips): a task then packs only its own B columns,
    // where splitting M would pack the same B block once per task.
    n_blocks = std::min(want, n_strips / 2);
    nc_strips = CeilDiv(n_strips, n_blocks);
    n_blocks = CeilDiv(n_strips, nc_strips);
  }
  int64_t m_blocks = std::min(p.m_strips, CeilDiv(want, n_blocks));
  if (m_blocks * n_blocks < want) {
    n_blocks = std::min(n_strips, CeilDiv(want, m_blocks));
    nc_strips = CeilDiv(n_strips, n_blocks);
    n_blocks = CeilDiv(n_strips, nc_strips);
  }
  p.mc_strips = CeilDiv(p.m_strips, m_blocks);
  // A task's scratch for a 16-bit A (its rows by kc, up to twice kHalfTileFloats) and C (its rows
  // by its columns, up to kHalfTileFloats): narrower column blocks first, then fewer rows. More
  // row blocks would each widen the 16-bit weights again: ViT-S's 197 x 1536 x 384 feed-forward
  // product in three row blocks ran 16% slower (1.80 -> 2.08 ms), its weights read from memory
  // three times.
  const auto bound_rows = [&](int64_t max_strips) {
    max_strips = std::max<int64_t>(1, max_strips);
    if (p.mc_strips > max_strips) p.mc_strips = CeilDiv(p.m_strips, CeilDiv(p.m_strips, max_strips));
  };
  if (p.a == GemmPlan::APath::kWidenRows) bound_rows(2 * kHalfTileFloats / p.kc / mr);
  if (s.c_half) {
    bound_rows(kHalfTileFloats / nr / mr);
    const int64_t max_cols = std::max<int64_t>(1, kHalfTileFloats / (p.mc_strips * mr) / nr);
    if (CeilDiv(n_strips, n_blocks) > max_cols) {
      n_blocks = CeilDiv(n_strips, max_cols);
      // As many per core (the tasks split the strips as evenly as they come, 32 in 12 as 2s and 3s).
      if (threads > 1 && n_blocks % threads != 0) n_blocks = std::min(n_strips, n_blocks + threads - n_blocks % threads);
    }
  }
  p.m_blocks = CeilDiv(p.m_strips, p.mc_strips);
  p.n_blocks = n_blocks;

  // Several tasks over the same columns of an unfolded image (a strided convolution on a small map,
  // N too narrow to split) would each unfold the same B blocks: unfold B once instead, split over
  // the cores, and let every task read it. (Unfolding costs more than reading a block packed on the
  // other core: 3x3 stride 2 on 14x14, 512 channels, 2 threads 1.81 -> 1.37 ms. A matrix B packs
  // with plain copies and stays per task.)
  // Not 16-bit weights: those would be widened whole, the float copy they are kept in half to avoid.
  if (p.b == GemmPlan::BPath::kPackEachBlock && p.m_blocks > 1 && s.b == B::kSource && !s.b_half) {
    p.b = GemmPlan::BPath::kPackShared;
  }

  // Weights packed at load come from memory once per run. When a task's rows of A for one K block
  // fit in a quarter of L2 (a transformer's 128 tokens: 128 KiB), its blocks take each B strip from
  // memory once for all A strips and request the next strip meanwhile; taller A's (a convolution's
  // pixels) would then re-read A from L3 for every strip, and keep the A-outer order.
  p.b_outer = p.b == GemmPlan::BPath::kPacked && p.m_strips > 1 &&
              p.mc_strips * mr * p.kc <= l2_block_floats / 2;
  return p;
}

std::string GemmPlan::ToString() const {
  std::ostringstream o;
  o << "GemmPlan M=" << shape.m << " N=" << shape.n << " K=" << shape.k << " tile=" << mr << "x" << nr;
  if (no_products) {
    o << " no products";
    return o.str();
  }
  o << " threads=" << threads << "/" << shape.threads << " A=" << Name(a) << " B=" << Name(b)
    << (b_tail ? "+tail" : "") << " K=" << k_blocks << "x" << kc << " M=" << m_strips << " strips in " << m_blocks
    << " blocks of " << mc_strips << " N=" << n_strips << " strips in " << n_blocks << " blocks, " << tasks()
    << " tasks" << (b_outer ? ", B outer" : "");
  return o.str();
}

}  // namespace onnxflow
