#include "ops/quant_ms/matmul_nbits.h"

#include <algorithm>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/quant_ms/matmul_nbits_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace quant_ms {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// At most 16 float lanes: a group's 16 bytes fill one AVX-512 vector of 32-bit lanes.
using DF = hn::CappedTag<float, 16>;

// Four columns at a time share each load of A and give the FMA units four independent chains
// (two per column: low and high halves of a group).
template <int kCols>
void Columns(const PackedNBits& b, const float* a, const float* block_sums, int64_t j, float* y) {
  const DF df;
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint8_t, DF> du8;
  constexpr int64_t kMaxLanes = 16;
  const int64_t lanes = std::min<int64_t>(static_cast<int64_t>(hn::Lanes(df)), kMaxLanes);
  const auto mask = hn::Set(di, 15);
  const uint8_t* col[kCols];
  const float* sc[kCols];
  for (int c = 0; c < kCols; ++c) {
    col[c] = b.column(j + c);
    sc[c] = b.scales.data() + (j + c) * b.blocks;
  }
  hn::Vec<DF> total[kCols];
  for (int c = 0; c < kCols; ++c) total[c] = hn::Zero(df);
  const int64_t bs = b.block_size;
  for (int64_t blk = 0; blk < b.blocks; ++blk) {
    hn::Vec<DF> lo[kCols], hi[kCols];
    for (int c = 0; c < kCols; ++c) lo[c] = hi[c] = hn::Zero(df);
    const int64_t e_begin = blk * bs, e_end = e_begin + bs;
    if (bs >= 32) {
      for (int64_t e = e_begin; e < e_end; e += 32) {
        const int64_t byte0 = e / 2;
        for (int64_t l = 0; l < 16; l += lanes) {
          const auto a_lo = hn::LoadU(df, a + e + l), a_hi = hn::LoadU(df, a + e + 16 + l);
          for (int c = 0; c < kCols; ++c) {
            const auto v = hn::PromoteTo(di, hn::LoadU(du8, col[c] + byte0 + l));
            lo[c] = hn::MulAdd(a_lo, hn::ConvertTo(df, hn::And(v, mask)), lo[c]);
            hi[c] = hn::MulAdd(a_hi, hn::ConvertTo(df, hn::ShiftRight<4>(v)), hi[c]);
          }
        }
      }
    } else {  // a block of 16 is one half of a group
      const int64_t byte0 = (e_begin / 32) * 16;
      const bool high = (e_begin / 16) & 1;
      for (int64_t l = 0; l < 16; l += lanes) {
        const auto va = hn::LoadU(df, a + e_begin + l);
        for (int c = 0; c < kCols; ++c) {
          const auto v = hn::PromoteTo(di, hn::LoadU(du8, col[c] + byte0 + l));
          const auto q = high ? hn::ShiftRight<4>(v) : hn::And(v, mask);
          lo[c] = hn::MulAdd(va, hn::ConvertTo(df, q), lo[c]);
        }
      }
    }
    for (int c = 0; c < kCols; ++c) total[c] = hn::MulAdd(hn::Add(lo[c], hi[c]), hn::Set(df, sc[c][blk]), total[c]);
  }
  for (int c = 0; c < kCols; ++c) {
    const float* sz = b.scaled_zero.data() + (j + c) * b.blocks;
    float corr = 0;
    for (int64_t blk = 0; blk < b.blocks; ++blk) corr += sz[blk] * block_sums[blk];
    y[c] = hn::GetLane(hn::SumOfLanes(df, total[c])) - corr;
  }
}

void Row(const PackedNBits& b, const float* a, const float* block_sums, int64_t j0, int64_t j1, float* y) {
  int64_t j = j0;
  for (; j + 4 <= j1; j += 4) Columns<4>(b, a, block_sums, j, y + j - j0);
  for (; j < j1; ++j) Columns<1>(b, a, block_sums, j, y + j - j0);
}

}  // namespace HWY_NAMESPACE
}  // namespace quant_ms
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
namespace onnxflow {
namespace quant_ms {

HWY_EXPORT(Row);

void MatMulNBitsRow(const PackedNBits& b, const float* a, const float* block_sums, int64_t j0, int64_t j1, float* y) {
  HWY_DYNAMIC_DISPATCH(Row)(b, a, block_sums, j0, j1, y);
}

void DequantizeNBitsPanel(const PackedNBits& b, int64_t k0, int64_t kc, int64_t j0, int64_t cols, int64_t nr,
                          float* dst) {
  const int64_t strips = (cols + nr - 1) / nr;
  for (int64_t t = 0; t < strips; ++t) {
    float* strip = dst + t * kc * nr;
    for (int64_t jj = 0; jj < nr; ++jj) {
      const int64_t j = t * nr + jj;
      if (j >= cols) {
        for (int64_t kk = 0; kk < kc; ++kk) strip[kk * nr + jj] = 0.f;
        continue;
      }
      const uint8_t* col = b.column(j0 + j);
      const float* s = b.scales.data() + (j0 + j) * b.blocks;
      const float* sz = b.scaled_zero.data() + (j0 + j) * b.blocks;
      for (int64_t kk = 0; kk < kc; ++kk) {
        const int64_t e = k0 + kk, blk = e / b.block_size;
        const uint8_t byte = col[(e / 32) * 16 + (e % 16)];
        const int q = (e & 16) ? byte >> 4 : byte & 15;
        strip[kk * nr + jj] = static_cast<float>(q) * s[blk] - sz[blk];
      }
    }
  }
}

}  // namespace quant_ms
}  // namespace onnxflow
#endif  // HWY_ONCE
