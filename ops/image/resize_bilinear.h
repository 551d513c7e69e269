// Bilinear Resize of float images (the last two axes of a 2-D or NCHW input) in ONNX Runtime's
// arithmetic, so that a model gives the same bits under both runtimes.
//
// Why not the separable passes of resize.cc: their weights are worked out in double and the two
// passes round in between. The difference is an ulp or so, but in a model quantized dynamically
// (DynamicQuantizeLinear after the Resize picks a scale from the tensor's range and rounds every
// value to it) an ulp moves values across rounding edges and the error grows layer by layer: a
// real background-removal network (119 ConvInteger, 39 Resize) differed from ONNX Runtime by 0.26
// in a side output with the separable passes and by nothing before its first Resize. ONNX
// Runtime's own fused and unfused runs of it agree bit for bit.
//
// The arithmetic, per axis: the source coordinate in float by the mode's formula, clamped to
// [0, length - 1]; lo = int(x), hi = min(lo + 1, length - 1); lo weighs |x - hi| and hi weighs
// |x - lo|, both 0.5 when lo == hi. An output is
//   ((wx_lo * wy_lo) * X[lo][lo] + (wx_hi * wy_lo) * X[lo][hi]) + (wx_lo * wy_hi) * X[hi][lo]
//     + (wx_hi * wy_hi) * X[hi][hi]
// in float, each product and sum rounded (no fused multiply-add), an axis left unresized going
// through the same formula with its scale 1.
#pragma once

#include <cstdint>
#include <vector>

#include "ops/image/resize_tables.h"

namespace onnxflow {
namespace image {

// One axis of the bilinear grid.
struct BilinearAxis {
  std::vector<int32_t> lo, hi;
  std::vector<float> w_lo, w_hi;
};

// Whether BilinearAxis can express `mode` (tf_crop_and_resize extrapolates, half_pixel_symmetric
// and the nearest-only mode have no bilinear form in ONNX Runtime).
bool BilinearCoordinateSupported(CoordinateMode mode);

// `scale` is the float factor ONNX Runtime uses: the scales input, or float(out) / float(in).
BilinearAxis BuildBilinearAxis(CoordinateMode mode, int64_t in_length, int64_t out_length, float scale);

// One output row: `lo_row` and `hi_row` are the input rows y's lo and hi, with their weights.
void BilinearRowF32(const float* lo_row, const float* hi_row, float wy_lo, float wy_hi, const BilinearAxis& x,
                    float* out);

// One output row of a channel-blocked image ([H, W, block] per block of channels): every pixel's
// `block` channels sampled with its weights, in the same arithmetic.
void BilinearBlockedRowF32(const float* lo_row, const float* hi_row, float wy_lo, float wy_hi, const BilinearAxis& x,
                           int64_t block, float* out);
// The same in plain C++ (the reference the SIMD targets are tested against).
void BilinearRowScalar(const float* lo_row, const float* hi_row, float wy_lo, float wy_hi, const BilinearAxis& x,
                       float* out);

}  // namespace image
}  // namespace onnxflow
