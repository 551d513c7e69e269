// AMX for the integer GEMM's products (qgemm.h). On CPUs with AMX-INT8 (Intel Sapphire Rapids and
// later) one tdpbusd multiplies a 16 x 64 uint8 tile of A by a 64 x 16 int8 tile of B into a 16 x 16
// int32 tile: 16,384 multiply-adds, the work of 256 vpdpbusd, in the time of about 16 of them.
// The operands are already in the form it wants: A's packed rows (or a convolution's rows read in
// place) are uint8 with any row stride, and each 16-column vector of a packed B strip is 64 bytes
// per k-quad at a stride of kQNr * 4, which is a B tile as it is (4 k of a column side by side).
//
// Only the products are here; the zero-point terms and the epilogues stay the target code's
// (qgemm-inl.h), which calls these on whole 16-row tiles of A and whole 64-byte chunks of K and
// leaves the rest (the last rows of a block, the k-quads past the last whole chunk) to VNNI.
#pragma once

#include <cstdint>

namespace onnxflow {
namespace qgemm_amx {

constexpr int64_t kTileRows = 16;  // rows of A per tile (and of C)
constexpr int64_t kTileK = 64;     // bytes of K per tile of A (k-quads per tile of B: 16)

// Whether the tiles can be used here: the CPU has AMX-TILE and AMX-INT8, the kernel enables their
// state (XCR0 bits 17 and 18), and this process was granted the tile data (Linux asks processes
// to request it: arch_prctl(ARCH_REQ_XCOMP_PERM), done once on the first call). False elsewhere.
bool Usable();

// A thread's use of the tiles: loads their configuration (8 tiles of 16 rows x 64 bytes) and
// releases them at the end, so the thread's context switches stop saving 8 KB of tile data.
class TileScope {
 public:
  TileScope();
  ~TileScope();
  TileScope(const TileScope&) = delete;
  TileScope& operator=(const TileScope&) = delete;
};

// out[r * ldo + c] = sum over k < 64 * chunks of A[r, k] * B[k, c], for r < 16 * row_tiles
// (row_tiles 1 or 2) and c < 16 * vecs (vecs 1 or 2). A: uint8, row r at a + r * lda. B: vector v
// of a packed strip at b[v], chunk t's 16 k-quads at b[v] + t * 16 * kQNr * 4. Inside a TileScope.
void Products(const uint8_t* a, int64_t lda, const int8_t* const* b, int64_t chunks, int row_tiles, int vecs,
              int32_t* out, int64_t ldo);

}  // namespace qgemm_amx
}  // namespace onnxflow
