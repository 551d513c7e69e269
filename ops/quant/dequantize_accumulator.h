// The int32 accumulators of an integer convolution to float, the way a dynamically quantized
// model writes it after each ConvInteger: Cast to float, Mul by the product of the scales, Add the
// bias per channel (and a Relu) — as one pass instead of four tensors:
//
//   y[n, c, i] = clamp?(float(acc[n, c, i]) * scale + bias[c], lo, hi)
//
// (a Relu is the clamp to [0, inf), Clip(min, max) a mobile network's Relu6)
//
// each product and sum rounded on its own (no fused multiply-add), so the values are those of the
// four ops: a dynamically quantized model re-quantizes them with a range taken from the tensor,
// where an ulp moves values across rounding edges (resize_bilinear.h has the measurement).
#pragma once

#include <cstdint>

namespace onnxflow {

// `bias_c` may be null (no Add); `clamp`, {lo, hi}, too (no Relu or Clip).
void DequantizeAccumulatorRow(const int32_t* acc, int64_t n, float scale, const float* bias_c, const float* clamp,
                              float* y);

}  // namespace onnxflow
