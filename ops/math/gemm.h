// Single-precision GEMM for the math family: C[M,N] (+)= A[M,K] * B[K,N], row-major, with a fused
// epilogue (per-row bias, per-column bias, activation).
//
// How it is fast (the BLIS recipe, mirrored for row-major C):
//  * A is packed in strips of MR rows: strip s holds, for every k, the MR values A[s*MR + r, k]
//    side by side. The micro-kernel broadcasts them one at a time.
//  * B is packed in strips of NR columns: strip t holds, for every k, the NR values B[k, t*NR + j].
//    The micro-kernel loads them as NR/lanes vectors. Row-major B that is not transposed can also
//    be read in place (a strip is then rows of stride ldb), which skips the copy for skinny M.
//  * The micro-kernel keeps an MR x NR tile of C in registers (8 x 48 floats = 24 zmm on
//    AVX-512) and streams one k-slice of A and B per step: 24 FMAs per 3 loads + 8 broadcasts.
//  * K is cut into blocks of kKc so the A micro-panel (MR x kKc) stays in L1 while the B block
//    (kKc x NC) stays in L2; the epilogue runs on the last K block while the tile is in registers.
//  * Work is split over cores in tiles of C; the packed layouts do not depend on the blocking, so
//    constant weights are packed once at load (PackA / PackB) and reused by every run.
//
// MR and NR depend on the CPU target chosen at run time (GemmTile()); a packed operand records the
// shape it was packed for.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "include/onnxflow/status.h"
#include "ops/math/gemm_activation.h"  // the epilogue's activations
#include "ops/math/gemm_plan.h"        // how a shape is blocked and split over cores
#include "ops/math/gemm_scratch.h"     // AlignedFloats, the scratch memory's one owner

namespace onnxflow {

// The micro-tile of the kernel selected for this CPU.
GemmTileShape GemmTile();

// A packed in MR-row strips (zero-padded past M). Element (i, k) of strip s = i / mr sits at
// data[s * strip_size() + k * mr + i % mr].
struct PackedA {
  int64_t m = 0, k = 0, mr = 0;
  AlignedFloats data;
  int64_t strips() const { return (m + mr - 1) / mr; }
  int64_t strip_size() const { return k * mr; }
};

// B packed in NR-column strips (zero-padded past N). Element (k, j) of strip t = j / nr sits at
// data[t * strip_size() + k * nr + j % nr].
struct PackedB {
  int64_t k = 0, n = 0, nr = 0;
  AlignedFloats data;
  int64_t strips() const { return (n + nr - 1) / nr; }
  int64_t strip_size() const { return k * nr; }
};

// Packs op(A) (M x K; A is K x M when trans) scaled by `scale`; `threads` > 1 may split the work.
PackedA PackA(const float* a, int64_t lda, bool trans, int64_t m, int64_t k, float scale = 1.0f, int threads = 1);
// Packs op(B) (K x N; B is N x K when trans). A product may read a prefix of what was packed: the
// first N' <= N columns, or the first K' <= K rows (the strips keep their packed stride); the
// attention core packs each chunk of keys once and reads as many keys as a block of queries sees.
PackedB PackB(const float* b, int64_t ldb, bool trans, int64_t k, int64_t n, int threads = 1);

// One operand: either packed, or raw memory with a leading dimension and a transpose flag.
struct GemmInputA {
  const PackedA* packed = nullptr;
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
  float scale = 1.0f;  // multiplies A when it is packed here (Gemm's alpha); packed A is used as is
  // Or A is read in place, element (i, k) at gather_base[gather_rows[i] + gather_cols[k]]: a
  // convolution whose rows are output pixels and whose k are (channel, tap) pairs reads its image
  // this way with nothing unfolded (PixelGather in conv_sources.h). Without gather_cols, element
  // (i, k) is at gather_base[gather_rows[i] + k].
  const float* gather_base = nullptr;
  const int64_t* gather_rows = nullptr;
  const int64_t* gather_cols = nullptr;
  // Or A is float16 (bfloat16 with half_bf16) rows of stride ld, not transposed, scale 1: a
  // float16 model's stored activations. Each task widens the rows and the K block it reads into
  // scratch of its own; no widened copy of the whole A exists.
  const uint16_t* half = nullptr;
  bool half_bf16 = false;
};
// A B operand that is not a matrix in memory (a convolution's unfolded input). Sgemm asks it for
// one block at a time, in the packed strip layout, right before the block is used: the block is
// built in L2 and consumed there, and the whole unfolded matrix never exists.
class BPanelSource {
 public:
  virtual ~BPanelSource() = default;
  // Writes rows [k0, k0 + kc) of columns [j0, j0 + cols) of B as ceil(cols / nr) strips, each kc
  // rows of nr floats, with zeros past column `cols`. Called concurrently for disjoint blocks.
  virtual void PackBlock(int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr, float* dst) const = 0;
  // A source whose every row of B is a contiguous run in memory may let the GEMM read it in place:
  // row k, column j is at base[offsets[k] + j], with readable memory (values ignored) for a vector
  // past the last column. Returns the base, or null (the default) to be packed.
  virtual const float* InPlaceRows(const int64_t** offsets) const {
    *offsets = nullptr;
    return nullptr;
  }
  // A source holding B as float16 or bfloat16 (`*bfloat16` says which) in PackB's layout for
  // strips of `nr` columns (strip t, row k at (t * K + k) * nr, zeros past column N) may let a
  // one-row product read it as it is, widened in registers, and a taller one request the next
  // block's strips while it widens this one. Returns it, or null (the default) to be packed block
  // by block.
  virtual const uint16_t* HalfStrips(int64_t nr, bool* bfloat16) const {
    (void)nr;
    *bfloat16 = false;
    return nullptr;
  }
};

struct GemmInputB {
  const PackedB* packed = nullptr;
  const float* data = nullptr;
  int64_t ld = 0;
  bool trans = false;
  const BPanelSource* source = nullptr;  // when set, B comes from here (packed and data unused)
};

struct GemmEpilogue {
  bool accumulate = false;            // C += A*B (C holds values on entry) instead of C = A*B
  const float* addend = nullptr;      // or C = A*B + addend (M x N, leading dimension ldc), e.g. a
                                      // residual connection; before the biases and the activation
  const float* row_bias = nullptr;    // M values added to each row
  const float* col_bias = nullptr;    // N values added to each column
  ActivationSpec activation;
  // When set, called once for each finished piece of C (a strip of at most a tile's rows by a block
  // of columns, all of K summed, the epilogue applied; the pieces cover C once) on the thread that
  // computed it, while the piece is still in that core's L1: a caller that reshapes C (a
  // convolution dropping its grid's wrapped columns, or transposing) does it in parallel and in cache.
  std::function<void(int64_t row0, int64_t rows, int64_t col0, int64_t cols)> block_done;
  // When set, C is stored here in float16 (bfloat16 with half_c_bf16), leading dimension ldc, and
  // the `c` argument is unused: each task sums its block of C in float scratch and rounds it once.
  // Not with accumulate, addend or block_done.
  uint16_t* half_c = nullptr;
  bool half_c_bf16 = false;
};

// C = act(op(A) * op(B) [+ C] + row_bias + col_bias). `threads` is the number of cores the call may
// use (tbb::parallel_for inside the caller's arena); small problems stay on the calling thread.
// Plans the shape (MakeGemmPlan) and runs the plan.
void Sgemm(int64_t m, int64_t n, int64_t k, const GemmInputA& a, const GemmInputB& b, float* c, int64_t ldc,
           const GemmEpilogue& epilogue, int threads);
// The same with the plan made ahead (for a kernel whose shape is known at load): `plan` must have
// been made for these operands' GemmShapeOf(m, n, k, a, b, threads, epilogue.half_c != nullptr).
void Sgemm(const GemmPlan& plan, const GemmInputA& a, const GemmInputB& b, float* c, int64_t ldc,
           const GemmEpilogue& epilogue);
// What MakeGemmPlan needs to know of the operands.
GemmShape GemmShapeOf(int64_t m, int64_t n, int64_t k, const GemmInputA& a, const GemmInputB& b, int threads,
                      bool c_half = false);

// Plain triple loop with the same semantics, for tests.
void SgemmReference(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, bool trans_a, const float* b,
                    int64_t ldb, bool trans_b, float alpha, float* c, int64_t ldc, const GemmEpilogue& epilogue);

}  // namespace onnxflow
