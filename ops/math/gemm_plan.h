// How Sgemm (gemm.h) runs one shape: the blocking of C, A and B, how each operand is read, and how
// the work is split over cores, decided once per shape in a plain struct. A kernel whose shape is
// known at load makes its plan then; Sgemm without a plan makes one on the stack (a few dozen
// integer operations). ToString() prints it for a person tuning the rules below (gemm_plan.cc).
#pragma once

#include <cstdint>
#include <string>

namespace onnxflow {

// The micro-tile of a GEMM kernel: MR rows of C by NR columns kept in registers.
struct GemmTileShape {
  int64_t mr;
  int64_t nr;
};

// What the plan depends on: the product's dimensions, the cores, and what kind each operand is.
struct GemmShape {
  enum class A : int8_t {
    kPacked,    // PackedA, made ahead
    kGathered,  // read in place through row and column offsets (a convolution's image)
    kMatrix,    // memory with a leading dimension
    kHalfMatrix,  // 16-bit memory with a leading dimension (GemmInputA::half)
  };
  enum class B : int8_t {
    kPacked,        // PackedB, made ahead
    kMatrix,        // memory with a leading dimension
    kSourceInPlace, // a BPanelSource whose rows are read in place
    kSource,        // a BPanelSource that packs its blocks
  };
  int64_t m = 0, n = 0, k = 0;
  int threads = 1;
  A a = A::kMatrix;
  bool a_trans = false, a_scaled = false;  // a matrix A: transposed; scaled (alpha != 1)
  B b = B::kMatrix;
  bool b_trans = false;  // a matrix B: transposed
  bool b_half = false;   // a source: 16-bit weights widened block by block (HalfStrips)
  bool c_half = false;   // C stored in 16 bits (GemmEpilogue::half_c)
  GemmTileShape tile{0, 0};
  // The floats one B block may take: 0 for half of this core's L2 (gemm_plan.cc). A test pins it,
  // so that the plan it checks does not depend on the machine it runs on.
  int64_t l2_block_floats = 0;

  bool operator==(const GemmShape& o) const {
    return m == o.m && n == o.n && k == o.k && threads == o.threads && a == o.a && a_trans == o.a_trans &&
           a_scaled == o.a_scaled && b == o.b && b_trans == o.b_trans && b_half == o.b_half && c_half == o.c_half &&
           tile.mr == o.tile.mr && tile.nr == o.tile.nr && l2_block_floats == o.l2_block_floats;
  }
};

struct GemmPlan {
  // How the blocks read A: as packed (given, or packed here once per call), in place, or (16-bit
  // A) each task widening the rows and K block it reads.
  enum class APath : int8_t { kPacked, kPackHere, kGathered, kInPlace, kWidenRows };
  // How the blocks read B: as packed (given); a matrix in place (skinny M; only a partial last strip
  // is copied, b_tail); a source's rows in place; all of B packed once per call and shared by the
  // tasks; or each task packing the block it is about to use.
  enum class BPath : int8_t { kPacked, kRaw, kSourceInPlace, kPackShared, kPackEachBlock };

  GemmShape shape;
  bool no_products = false;  // k == 0: C = act([C] + biases), no blocks
  int threads = 1;           // cores the blocks are split over (1 below the work that pays for more)
  APath a = APath::kPackHere;
  BPath b = BPath::kPackEachBlock;
  bool b_tail = false;       // kRaw with N not a multiple of NR: the last strip is packed
  int64_t mr = 0, nr = 0;
  int64_t k_blocks = 1, kc = 0;    // K in k_blocks near-equal blocks of at most kc
  int64_t m_strips = 0, n_strips = 0;
  int64_t m_blocks = 1, mc_strips = 0;  // row blocks of mc_strips strips (the last may be short)
  int64_t n_blocks = 1;            // column blocks of near-equal strip counts
  bool b_outer = false;  // B packed at load and a row block small enough to stay in L2: each block
                         // walks B strips outside and A strips inside (gemm-inl.h RunBlockImpl)
  int64_t tasks() const { return m_blocks * n_blocks; }

  std::string ToString() const;
};

// The plan the rules give `shape` (its tile included).
GemmPlan MakeGemmPlan(const GemmShape& shape);

}  // namespace onnxflow
