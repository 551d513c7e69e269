// Highway body of ChannelAffineLastAxis (channel_affine_simd.cc), compiled once per target; Mul
// then Add, never MulAdd (and the file built with -ffp-contract=off, so that GCC does not fuse
// them either: ONNX Runtime's BatchNormalization does not).
#if defined(ONNXFLOW_OPS_QUANT_MS_CHANNEL_AFFINE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_QUANT_MS_CHANNEL_AFFINE_INL_H_
#undef ONNXFLOW_OPS_QUANT_MS_CHANNEL_AFFINE_INL_H_
#else
#define ONNXFLOW_OPS_QUANT_MS_CHANNEL_AFFINE_INL_H_
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "hwy/highway.h"
#include "ops/quant_ms/channel_affine.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// One element of channel c (the scalar tail's, the same operations as the vector body's).
inline int32_t ChannelAffineOne(int32_t x, const float* p, int64_t channels, int64_t c) {
  auto at = [&](int row) { return p[row * channels + c]; };
  float v = (static_cast<float>(x) - at(kXz)) * at(kXs);
  v = v * at(kS);
  v = v + at(kB);
  v = std::min(std::max(v, at(kLo)), at(kHi));
  v = v / at(kYs);
  v = std::min(std::max(v, at(kBelow)), at(kAbove));
  return static_cast<int32_t>(std::nearbyint(v)) + static_cast<int32_t>(at(kYz));
}

// Pixels in tiles of kPixelTile (32 x C bytes stay in L1 for C up to 1024), each tile a vector
// of channels at a time: its nine parameter vectors loaded once for the tile's pixels, not once
// per pixel. At 56x56x256 from L2 (one core, AVX-512): 0.21 ns an element, 0.27 with the
// parameters loaded per pixel, 0.37 reading the table in blocks of 64 channels.
constexpr int64_t kPixelTile = 32;

template <typename TX, typename TY>
void ChannelAffinePixels(const TX* x, const float* p, int64_t channels, int64_t pixels, TY* y) {
  const hn::ScalableTag<float> df;
  const hn::RebindToSigned<decltype(df)> di;
  const hn::Rebind<TX, decltype(df)> dx;
  const hn::Rebind<TY, decltype(df)> dy;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(df));
  auto row = [&](int r, int64_t c) { return hn::LoadU(df, p + r * channels + c); };
  for (int64_t q0 = 0; q0 < pixels; q0 += kPixelTile) {
    const int64_t q1 = std::min(pixels, q0 + kPixelTile);
    int64_t c = 0;
    for (; c + lanes <= channels; c += lanes) {
      const auto xz = row(kXz, c), xs = row(kXs, c), s = row(kS, c), b = row(kB, c), lo = row(kLo, c),
                 hi = row(kHi, c), ys = row(kYs, c), below = row(kBelow, c), above = row(kAbove, c);
      const auto yz = hn::ConvertTo(di, row(kYz, c));
      for (int64_t q = q0; q < q1; ++q) {
        auto v = hn::ConvertTo(df, hn::PromoteTo(di, hn::LoadU(dx, x + q * channels + c)));
        v = hn::Mul(hn::Sub(v, xz), xs);
        v = hn::Mul(v, s);
        v = hn::Add(v, b);
        v = hn::Min(hn::Max(v, lo), hi);
        v = hn::Div(v, ys);
        v = hn::Min(hn::Max(v, below), above);
        hn::StoreU(hn::DemoteTo(dy, hn::Add(hn::NearestInt(v), yz)), dy, y + q * channels + c);
      }
    }
    for (; c < channels; ++c) {
      for (int64_t q = q0; q < q1; ++q) {
        y[q * channels + c] = static_cast<TY>(ChannelAffineOne(x[q * channels + c], p, channels, c));
      }
    }
  }
}

inline void ChannelAffineLastAxisImpl(const uint8_t* x, bool x_signed, const float* params, int64_t channels,
                                      int64_t pixels, bool y_signed, uint8_t* y) {
  const int8_t* xs = reinterpret_cast<const int8_t*>(x);
  int8_t* ys = reinterpret_cast<int8_t*>(y);
  if (x_signed && y_signed) return ChannelAffinePixels(xs, params, channels, pixels, ys);
  if (x_signed) return ChannelAffinePixels(xs, params, channels, pixels, y);
  if (y_signed) return ChannelAffinePixels(x, params, channels, pixels, ys);
  ChannelAffinePixels(x, params, channels, pixels, y);
}

}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
