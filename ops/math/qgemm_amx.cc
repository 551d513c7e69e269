// AMX tiles for the integer GEMM (qgemm_amx.h). Compiled for every build; the instructions run only
// where Usable() says so (the drivers in qgemm.cc ask it before they set QBlock::amx).
#include "ops/math/qgemm_amx.h"

#include "ops/math/qgemm.h"

#if defined(__x86_64__) && defined(__linux__)
#define ONNXFLOW_HAS_AMX_CODE 1
#include <cpuid.h>
#include <immintrin.h>
#include <sys/syscall.h>
#include <unistd.h>
#else
#define ONNXFLOW_HAS_AMX_CODE 0
#endif

namespace onnxflow {
namespace qgemm_amx {

#if ONNXFLOW_HAS_AMX_CODE

#define ONNXFLOW_AMX_ATTR __attribute__((target("amx-tile,amx-int8")))

namespace {

// Linux's arch_prctl codes for the tile data state (asm/prctl.h, not in every libc's headers).
constexpr int kArchReqXcompPerm = 0x1023;
constexpr int kXfeatureXtiledata = 18;

bool Detect() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_max(0, nullptr) < 7) return false;
  __cpuid_count(7, 0, eax, ebx, ecx, edx);
  const bool tile = (edx >> 24) & 1, int8 = (edx >> 25) & 1;
  if (!tile || !int8) return false;
  __cpuid(1, eax, ebx, ecx, edx);
  if (((ecx >> 27) & 1) == 0) return false;  // no OSXSAVE: XCR0 cannot be read
  unsigned xcr0_lo = 0, xcr0_hi = 0;
  __asm__ volatile("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
  if ((xcr0_lo & 0x60000u) != 0x60000u) return false;  // XTILECFG and XTILEDATA
  return syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) == 0;
}

// Palette 1: every tile 16 rows of 64 bytes. C tiles are 0-3, A tiles 4-5, B tiles 6-7.
struct alignas(64) TileConfig {
  uint8_t palette = 1;
  uint8_t start_row = 0;
  uint8_t reserved[14] = {};
  uint16_t colsb[16] = {};
  uint8_t rows[16] = {};

  TileConfig() {
    for (int t = 0; t < 8; ++t) {
      colsb[t] = 64;
      rows[t] = 16;
    }
  }
};

constexpr int64_t kBStride = kQNr * 4;                      // bytes from one k-quad of a strip to the next
constexpr int64_t kBChunk = kTileK / 4 * kBStride;          // bytes of a strip per 64 k
static_assert(kQNr % 16 == 0, "a strip holds whole 16-column B tiles");

// C[0..1][0..1] (row tile, vector) += A[row tile] * B[vector] over the chunks; the tiles not in
// the kRowTiles x kVecs shape are not touched. Each chunk loads each A and B tile once and runs
// kRowTiles * kVecs tdpbusd on them.
template <int kRowTiles, int kVecs>
ONNXFLOW_AMX_ATTR void Kernel(const uint8_t* a, int64_t lda, const int8_t* const* b, int64_t chunks, int32_t* out,
                              int64_t ldo) {
  const uint8_t* a1 = a + kTileRows * lda;
  const int8_t* b0 = b[0];
  const int8_t* b1 = kVecs > 1 ? b[1] : b[0];
  _tile_zero(0);
  if constexpr (kVecs > 1) _tile_zero(1);
  if constexpr (kRowTiles > 1) _tile_zero(2);
  if constexpr (kRowTiles > 1 && kVecs > 1) _tile_zero(3);
  for (int64_t t = 0; t < chunks; ++t) {
    _tile_loadd(4, a + t * kTileK, lda);
    _tile_loadd(6, b0 + t * kBChunk, kBStride);
    _tile_dpbusd(0, 4, 6);
    if constexpr (kVecs > 1) {
      _tile_loadd(7, b1 + t * kBChunk, kBStride);
      _tile_dpbusd(1, 4, 7);
    }
    if constexpr (kRowTiles > 1) {
      _tile_loadd(5, a1 + t * kTileK, lda);
      _tile_dpbusd(2, 5, 6);
      if constexpr (kVecs > 1) _tile_dpbusd(3, 5, 7);
    }
  }
  const int64_t row_bytes = ldo * static_cast<int64_t>(sizeof(int32_t));
  _tile_stored(0, out, row_bytes);
  if constexpr (kVecs > 1) _tile_stored(1, out + 16, row_bytes);
  if constexpr (kRowTiles > 1) _tile_stored(2, out + kTileRows * ldo, row_bytes);
  if constexpr (kRowTiles > 1 && kVecs > 1) _tile_stored(3, out + kTileRows * ldo + 16, row_bytes);
  // The intrinsics are asm statements without a memory operand: the stores must not be moved
  // past the caller's reads of `out`.
  __asm__ volatile("" ::: "memory");
}

}  // namespace

bool Usable() {
  static const bool usable = Detect();
  return usable;
}

namespace {
ONNXFLOW_AMX_ATTR void LoadConfig() {
  static const TileConfig config;
  _tile_loadconfig(&config);
}
ONNXFLOW_AMX_ATTR void Release() { _tile_release(); }
}  // namespace

TileScope::TileScope() { LoadConfig(); }
TileScope::~TileScope() { Release(); }

void Products(const uint8_t* a, int64_t lda, const int8_t* const* b, int64_t chunks, int row_tiles, int vecs,
              int32_t* out, int64_t ldo) {
  if (row_tiles > 1) {
    return vecs > 1 ? Kernel<2, 2>(a, lda, b, chunks, out, ldo) : Kernel<2, 1>(a, lda, b, chunks, out, ldo);
  }
  return vecs > 1 ? Kernel<1, 2>(a, lda, b, chunks, out, ldo) : Kernel<1, 1>(a, lda, b, chunks, out, ldo);
}

#else  // no AMX code on this architecture: Usable() is false and nothing else is reached

bool Usable() { return false; }
TileScope::TileScope() {}
TileScope::~TileScope() {}
void Products(const uint8_t*, int64_t, const int8_t* const*, int64_t, int, int, int32_t*, int64_t) {}

#endif

}  // namespace qgemm_amx
}  // namespace onnxflow
