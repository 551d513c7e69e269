// MatMulNBits' dispatch to its SIMD kernels (matmul_nbits-inl.h) and the GEMM panels' dequantizing.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/quant_ms/matmul_nbits_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/quant_ms/matmul_nbits-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <cmath>
#include <vector>

#include "ops/quant_ms/matmul_nbits.h"

namespace onnxflow {
namespace quant_ms {

HWY_EXPORT(Row);
HWY_EXPORT(FourRows);
HWY_EXPORT(Int8KernelImpl);
HWY_EXPORT(QuantizeRowsImpl);
HWY_EXPORT(Int8Impl);
HWY_EXPORT(DecodeColumnImpl);
HWY_EXPORT(PanelStripsImpl);

bool NBitsInt8Available(int bits) { return HWY_DYNAMIC_DISPATCH(Int8KernelImpl)(bits); }

void MatMulNBitsRow(const PackedNBits& b, const float* a, const float* block_sums, int64_t j0, int64_t j1, float* y) {
  HWY_DYNAMIC_DISPATCH(Row)(b, a, block_sums, j0, j1, y);
}

void MatMulNBitsFourRows(const PackedNBits& b, const float* a, int64_t lda, int64_t rows, int64_t j0, int64_t j1,
                         float* y, int64_t ldy) {
  HWY_DYNAMIC_DISPATCH(FourRows)(b, a, lda, rows, j0, j1, y, ldy);
}

void QuantizeRowsForNBits(const PackedNBits& b, const float* a, int64_t m, NBitsQuantA* qa) {
  HWY_DYNAMIC_DISPATCH(QuantizeRowsImpl)(b, a, m, qa);
}

void MatMulNBitsInt8(const PackedNBits& b, const NBitsQuantA& qa, int64_t m, int64_t p0, int64_t p1,
                     const float* bias, float* y) {
  HWY_DYNAMIC_DISPATCH(Int8Impl)(b, qa, m, p0, p1, bias, y);
}

// Straight into the strips where the block is in whole groups (PanelStrips); otherwise each
// column's kc values are decoded with SIMD into a column-major scratch, then transposed into
// the strips (the GEMM's layout is row-major by strip). Element by element from the packed column,
// the dequantizing was 55% of an M = 128, K = N = 4096 MatMul.
void DequantizeNBitsPanel(const PackedNBits& b, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr,
                          float* dst) {
  if (HWY_DYNAMIC_DISPATCH(PanelStripsImpl)(b, k0, kc, j0, cols, nr, dst)) return;
  const auto decode = HWY_DYNAMIC_DISPATCH(DecodeColumnImpl);
  std::vector<float> tmp(nr * kc);
  const int64_t strips = (cols + nr - 1) / nr;
  for (int64_t t = 0; t < strips; ++t) {
    float* strip = dst + t * kc * nr;
    for (int64_t jj = 0; jj < nr; ++jj) {
      const int64_t j = t * nr + jj;
      if (j < cols) {
        decode(b, j0 + j, k0, k0 + kc, tmp.data() + jj * kc);
      } else {
        std::fill(tmp.begin() + jj * kc, tmp.begin() + (jj + 1) * kc, 0.f);
      }
    }
    for (int64_t kk = 0; kk < kc; ++kk) {
      for (int64_t jj = 0; jj < nr; ++jj) strip[kk * nr + jj] = tmp[jj * kc + kk];
    }
  }
}

}  // namespace quant_ms
}  // namespace onnxflow
#endif  // HWY_ONCE
