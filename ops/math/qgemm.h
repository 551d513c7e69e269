// Integer GEMM for the quantized ops: C[M,N] = sum_k (A[i,k] - a_zero[i]) * (B[k,j] - b_zero[j]),
// A and B 8-bit (uint8 or int8 each), accumulated in int32, then an epilogue that stores int32,
// dequantizes to float (MatMulIntegerToFloat, DynamicQuantizeMatMul) or requantizes to uint8/int8
// (QLinearMatMul, QLinearConv, QGemm).
//
// How it is fast:
//  * Every operand pair becomes uint8 x int8, the form of AVX-512 VNNI's vpdpbusd (4 byte products
//    summed into each int32 lane per instruction): A is stored as uint8 (an int8 A gets +128), B as
//    int8 (a uint8 B gets -128). The shifts move into the zero points, which are applied after the
//    products through A's row sums and B's column sums:
//      sum (a - za)(b - zb) = sum a*b - zb * rowsum(a) - za * colsum(b) + K * za * zb.
//  * A is packed as rows of K rounded up to 4 bytes (with its row sums); B in strips of kQNr = 48
//    columns, each k-quad of a strip 48 x 4 bytes (one column's 4 k side by side), zero-padded
//    past K and N, with its column sums. The layout is the same on every CPU target, so constant
//    weights are packed once at load (QPackB / QPackA) and reused by every run on any target.
//  * The micro-kernel keeps a tile of C in int32 registers: 8 rows x 3 zmm on AVX-512 VNNI (24
//    vpdpbusd per 3 loads + 8 broadcasts). AVX-512BW and AVX2 have no vpdpbusd: they use
//    vpmaddubsw, which adds each pair of byte products in saturating int16 (255 * 127 * 2 would
//    not fit), on a B whose pairs are bounded at packing (QPackedB::pairs_bounded); else they
//    split bytes into 16-bit even and odd halves for vpmaddwd, which is exact. The portable target
//    is a plain loop, the tests' reference.
//  * Work is split over cores in tiles of C through ParallelFor (ops/framework/parallel.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace onnxflow {

constexpr int64_t kQNr = 48;  // columns per packed B strip (every target)

// Owning, 64-byte aligned bytes.
struct AlignedBytesFree {
  void operator()(uint8_t* p) const;
};
using AlignedBytes = std::unique_ptr<uint8_t[], AlignedBytesFree>;
AlignedBytes MakeAlignedBytes(int64_t n);

// A packed: row i at data[i * kp], stored value = source + offset (0 for uint8, 128 for int8),
// zeros past k. row_sums over the stored values.
struct QPackedA {
  int64_t m = 0, k = 0, kp = 0;
  int32_t offset = 0;
  AlignedBytes data;
  std::vector<int32_t> row_sums;
};

// B packed in strips of kQNr columns: byte e of column j of k-quad q of strip t at
// data[t * strip_bytes() + (q * kQNr + j % kQNr) * 4 + e] holds B[4q + e, t * kQNr + j] + offset
// (offset 0 for int8, -128 for uint8) as int8, zero past k and n. col_sums over the stored values
// (padded to strips() * kQNr).
//
// Packed for AVX2 or AVX-512 without VNNI, B's pairs are bounded for vpmaddubsw when few need it:
// every pair of bytes it adds in int16 (k = 4q + 0 and 1, 4q + 2 and 3 of a column) summing past
// +-128 has its second byte moved toward zero until the sum is +-128 (so 255 * |b0 + b1| <= 32640
// cannot saturate), and the part moved is kept in `fixes`, which the tile loop adds back to each
// tile: the products stay exact on every target (the VNNI, AMX and window paths, which never see
// a B bounded for them, step aside for one with fixes). col_sums are of the bytes before bounding.
struct QPairFix {
  int32_t k;      // B's row
  int16_t col;    // column within the strip
  int16_t delta;  // the stored byte minus the bounded one
};
// B's zero-point terms for one set of zero points, padded to whole strips: zb' (the zero point in
// the stored domain) and colsum(B) - K * zb' per column (qgemm.cc).
struct QZeroTerms {
  std::vector<int32_t> b_zero;  // the zero points they were made for (1 or n values)
  std::vector<int32_t> zb, b_term;
  bool zb_zero = true;  // zb' is 0 in every column: A's row sums are not needed
};

struct QPackedB {
  int64_t k = 0, n = 0, kp = 0;
  int32_t offset = 0;
  AlignedBytes data;
  std::vector<int32_t> col_sums;
  bool pairs_bounded = false;
  std::vector<QPairFix> fixes;      // by strip, then k; empty unless pairs_bounded
  std::vector<int64_t> fix_starts;  // strip t's fixes are [fix_starts[t], fix_starts[t + 1])
  // The zero-point terms of the last call, kept for the next one with the same zero points (a
  // weight's are fixed): made afresh they cost a recurrent step of a dynamically quantized LSTM
  // (one row times 128 x 512) a third of its time. Read and replaced atomically (std::atomic_load
  // / store): one packed weight serves every thread. Copies share it; QPackBInto drops it.
  mutable std::shared_ptr<const QZeroTerms> zero_terms;
  int64_t strips() const { return (n + kQNr - 1) / kQNr; }
  int64_t strip_bytes() const { return kp * kQNr; }
};

// a: M x K (row i at a + i * lda), int8 when a_signed else uint8.
QPackedA QPackA(const void* a, bool a_signed, int64_t lda, int64_t m, int64_t k, int threads = 1);
// op(B) K x N: B[k, j] at b + k * ldb + j, or at b + j * ldb + k when trans.
QPackedB QPackB(const void* b, bool b_signed, int64_t ldb, bool trans, int64_t k, int64_t n, int threads = 1);
// Packs into an existing QPackedB whose buffers already have room (a convolution reusing one per
// thread): resizes only when too small. Its pairs are never bounded.
void QPackBInto(const void* b, bool b_signed, int64_t ldb, bool trans, int64_t k, int64_t n, QPackedB* out);

enum class QOutput { kInt32, kFloat, kUint8, kInt8 };

// What becomes of each int32 sum v(i, j) (zero points already applied):
//   kInt32:  v + bias_row[i] + bias_col[j]
//   kFloat:  float(v + biases) * scale_row[i] * scale_col[j] + fbias_col[j]
//   kUint8 / kInt8: saturate(round_half_even(float(v + biases) * (scale_row[i] * scale_col[j] /
//            out_scale)) + out_zero)
// Absent arrays are 0 (biases) or 1 (scales).
struct QEpilogue {
  QOutput kind = QOutput::kInt32;
  const int32_t* bias_row = nullptr;
  const int32_t* bias_col = nullptr;
  const float* scale_row = nullptr;
  const float* scale_col = nullptr;
  const float* fbias_col = nullptr;
  float out_scale = 1.0f;
  int32_t out_zero = 0;
  // The column arrays hold B's strips() * kQNr values (zeros past n) and are read in place; else
  // each call copies them with that padding (a recurrent step's one-row product paid 4% for it).
  bool padded_cols = false;
};

// Zero points in the operands' own types, as int32: one value (count 1) or one per row of A / per
// column of B (count m / n); null means 0.
struct QZeroPoints {
  const int32_t* a = nullptr;
  int64_t a_count = 1;
  const int32_t* b = nullptr;
  int64_t b_count = 1;
};

// C (element (i, j) at c + (i * ldc + j) * sizeof(output type)) = epilogue(A * B). `threads`: cores
// the call may use (tbb::parallel_for inside the caller's arena).
void QGemm(const QPackedA& a, const QPackedB& b, const QZeroPoints& zero, const QEpilogue& epilogue, void* c,
           int64_t ldc, int threads);

// A whose rows the caller makes as the GEMM walks them, block by block: a channels-last
// convolution's pixels, read in place when the window is one pixel (ops/math/quant_conv.h),
// gathered tap by tap into the scratch otherwise. Rows(i0, rows, scratch) returns the first of
// rows [i0, i0 + rows) as stored values (source + offset), 4-byte groups past k multiplying B's
// zero padding (so they may hold anything readable), and sets *lda to the row stride; `scratch`
// has room for rows * kp + kRowSlack bytes (a source may store a row's last bytes in a piece of
// up to that size). Called from several threads at once (distinct rows each).
//
// A source whose rows are windows of an image (a KxK convolution's) may also hand them over in
// place, so the rows are never gathered: Windows(i0, rows, w) answers how many of rows [i0, i0 +
// rows) from i0 on it describes as w->segments runs each, segment s of row r at w->base[s] + r *
// w->stride and holding K's bytes [s * w->seg_k, (s + 1) * w->seg_k) (a multiple of 4); 0 when
// row i0's window leaves the image. The rows it describes share an output row; a tile of rows it
// does not describe whole is gathered. HasWindows: whether Windows can answer more than 0 at all. The VNNI kernels read
// windows (when B's zero point is 0 everywhere and the output is requantized); every other path
// gathers.
constexpr int64_t kRowSlack = 32;
struct QWindows {
  static constexpr int kMaxSegments = 7;
  int64_t segments = 0, seg_k = 0, stride = 0;
  const uint8_t* base[kMaxSegments] = {};
};
class QRowSource {
 public:
  virtual ~QRowSource() = default;
  virtual const uint8_t* Rows(int64_t i0, int64_t rows, uint8_t* scratch, int64_t* lda) const = 0;
  virtual bool HasWindows() const { return false; }
  virtual int64_t Windows(int64_t /*i0*/, int64_t /*rows*/, QWindows* /*w*/) const { return 0; }
};
struct QRowsA {
  int64_t m = 0, k = 0;
  int32_t offset = 0;  // 0 for uint8 rows, 128 for int8 rows flipped to uint8
  int32_t zero = 0;    // A's zero point in its own type (one for every row)
  const QRowSource* source = nullptr;
  int64_t kp() const { return (k + 3) / 4 * 4; }
};
// C = epilogue(A * B) as QGemm, A produced by a.source. Rows are split into blocks (each thread
// makes its own rows once and runs them against all its strips of B); A's row sums are computed
// only when B's zero point (in the stored domain) is not zero everywhere.
void QGemmRows(const QRowsA& a, const QPackedB& b, const int32_t* b_zero, int64_t b_zero_count,
               const QEpilogue& epilogue, void* c, int64_t ldc, int threads);

// Plain loops with the same semantics on unpacked operands, for tests.
void QGemmReference(int64_t m, int64_t n, int64_t k, const void* a, bool a_signed, int64_t lda, const void* b,
                    bool b_signed, int64_t ldb, bool trans_b, const QZeroPoints& zero, const QEpilogue& epilogue,
                    void* c, int64_t ldc);

// Whether QGemm uses vpdpbusd on this CPU (AVX-512 target with VNNI); tests turn it off to reach the
// AVX-512BW kernel on a VNNI machine (which turns AMX off too).
bool QGemmUsesVnni();
void QGemmDisableVnniForTest(bool disable);
// Whether QGemm uses AMX tiles on this CPU (qgemm_amx.h; on top of VNNI, for whole 16-row tiles of
// a K of 64 or more, the k-quads past its last 64-byte chunk on VNNI); tests turn it off to reach
// the VNNI kernels on an AMX machine.
bool QGemmUsesAmx();
void QGemmDisableAmxForTest(bool disable);

namespace qgemm_internal {

// Bytes of one element of C.
inline size_t OutputBytes(QOutput kind) { return kind == QOutput::kInt32 || kind == QOutput::kFloat ? 4 : 1; }

// One tile row-strip job handed to the target code: rows [0, m) of packed A (at the block's first
// row) times strips of B, with the epilogue, written to C at the block's first row and column.
struct QBlock {
  const uint8_t* a = nullptr;  // first row; null when `source` makes the rows tile by tile
  // Rows read as windows (QRowSource::Windows) where they can be, else gathered a tile at a time:
  // the block's row i is the source's row source_row0 + i.
  const QRowSource* source = nullptr;
  int64_t source_row0 = 0;
  uint8_t* scratch = nullptr;  // with `source`: room for m * kp + kRowSlack bytes of gathered rows
  int64_t kp = 0;              // bytes of K per A row (a multiple of 4)
  int64_t lda = 0;             // A's row stride in bytes; 0: kp
  int64_t m = 0;               // rows in the block
  const int8_t* b = nullptr;   // first strip
  int64_t strip_bytes = 0;
  // B's pairs are bounded (QPackedB::pairs_bounded): the block's strip s adds back
  // fixes[fix_starts[s], fix_starts[s + 1]) (fix_starts at the block's first strip; null: none).
  bool pairs_bounded = false;
  const QPairFix* fixes = nullptr;
  const int64_t* fix_starts = nullptr;
  int64_t n = 0;               // columns in the block (strips of kQNr, the last may be partial)
  // Per row (at the block's first row): -rowsum(A), -za', int32 bias, float scale.
  const int32_t* neg_row_sum = nullptr;
  const int32_t* neg_za = nullptr;
  const int32_t* bias_row = nullptr;
  const float* scale_row = nullptr;
  // Per column (at the block's first column, readable up to the block's last full strip):
  // zb', colsum(B) - K * zb', int32 bias, float scale, float bias.
  const int32_t* zb = nullptr;
  const int32_t* b_term = nullptr;
  const int32_t* bias_col = nullptr;
  const float* scale_col = nullptr;
  const float* fbias_col = nullptr;
  QOutput kind = QOutput::kInt32;
  float inv_out_scale = 1.0f;  // unused: the requantizing epilogue divides, as the reference does
  float out_scale = 1.0f;
  int32_t out_zero = 0;
  void* c = nullptr;
  int64_t ldc = 0;
  bool vnni = false;
  // AMX tiles for the block's whole 16-row tiles (qgemm_amx.h): set only with vnni, and only when
  // kp is 64 or more.
  bool amx = false;
  // Shortcuts the fused VNNI epilogue takes: zb' is 0 in every column (no row-sum term), and
  // every row's -za' is 1 with no row bias (b_term then holds -za' * b_term + bias_col whole).
  bool zb_zero = false;
  bool unit_za = false;
};

}  // namespace qgemm_internal
}  // namespace onnxflow
