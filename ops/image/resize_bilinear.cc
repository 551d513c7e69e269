#include "ops/image/resize_bilinear.h"

#include <algorithm>
#include <cmath>

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/image/resize_bilinear.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/image/resize_bilinear-inl.h"

#if HWY_ONCE
namespace onnxflow {
namespace image {

bool BilinearCoordinateSupported(CoordinateMode mode) {
  return mode == CoordinateMode::kHalfPixel || mode == CoordinateMode::kPytorchHalfPixel ||
         mode == CoordinateMode::kAlignCorners || mode == CoordinateMode::kAsymmetric;
}

BilinearAxis BuildBilinearAxis(CoordinateMode mode, int64_t in_length, int64_t out_length, float scale) {
  BilinearAxis a;
  const auto n = static_cast<size_t>(out_length);
  a.lo.resize(n);
  a.hi.resize(n);
  a.w_lo.resize(n);
  a.w_hi.resize(n);
  const float in_f = static_cast<float>(in_length), out_f = static_cast<float>(out_length);
  const int64_t last = in_length - 1;
  for (int64_t o = 0; o < out_length; ++o) {
    const float xo = static_cast<float>(o);
    float x = xo;
    if (scale != 1.0f) {
      switch (mode) {
        case CoordinateMode::kAsymmetric: x = xo / scale; break;
        case CoordinateMode::kPytorchHalfPixel: x = out_length > 1 ? (xo + 0.5f) / scale - 0.5f : 0.0f; break;
        case CoordinateMode::kAlignCorners: x = out_length == 1 ? 0.0f : xo * (in_f - 1) / (out_f - 1); break;
        default: x = (xo + 0.5f) / scale - 0.5f; break;  // half_pixel
      }
    }
    x = std::max(0.0f, std::min(x, static_cast<float>(last)));
    const int64_t lo = std::min(static_cast<int64_t>(x), last), hi = std::min(lo + 1, last);
    a.lo[o] = static_cast<int32_t>(lo);
    a.hi[o] = static_cast<int32_t>(hi);
    if (lo == hi) {
      a.w_lo[o] = a.w_hi[o] = 0.5f;
    } else {
      a.w_lo[o] = std::fabs(x - static_cast<float>(hi));
      a.w_hi[o] = std::fabs(x - static_cast<float>(lo));
    }
  }
  return a;
}

HWY_EXPORT(BilinearRowImpl);

void BilinearRowF32(const float* lo_row, const float* hi_row, float wy_lo, float wy_hi, const BilinearAxis& x,
                    float* out) {
  HWY_DYNAMIC_DISPATCH(BilinearRowImpl)(lo_row, hi_row, wy_lo, wy_hi, x, out);
}

HWY_EXPORT(BilinearBlockedRowImpl);

void BilinearBlockedRowF32(const float* lo_row, const float* hi_row, float wy_lo, float wy_hi, const BilinearAxis& x,
                           int64_t block, float* out) {
  HWY_DYNAMIC_DISPATCH(BilinearBlockedRowImpl)(lo_row, hi_row, wy_lo, wy_hi, x, block, out);
}

void BilinearRowScalar(const float* lo_row, const float* hi_row, float wy_lo, float wy_hi, const BilinearAxis& x,
                       float* out) {
  for (size_t i = 0; i < x.lo.size(); ++i) {
    const int32_t a = x.lo[i], b = x.hi[i];
    out[i] = x.w_lo[i] * wy_lo * lo_row[a] + x.w_hi[i] * wy_lo * lo_row[b] + x.w_lo[i] * wy_hi * hi_row[a] +
             x.w_hi[i] * wy_hi * hi_row[b];
  }
}

}  // namespace image
}  // namespace onnxflow
#endif  // HWY_ONCE
