// The int32 accumulators of an integer convolution to float, the way a dynamically quantized
// model writes it after each ConvInteger: Cast to float, Mul by the product of the scales, Add the
// bias per channel (and a Relu) — as one pass instead of four tensors:
//
//   y[n, c, i] = max?(float(acc[n, c, i]) * scale + bias[c], 0)
//
// each product and sum rounded on its own (no fused multiply-add), so the values are those of the
// four ops: a dynamically quantized model re-quantizes them with a range taken from the tensor,
// where an ulp moves values across rounding edges (resize_bilinear.h has the measurement).
#pragma once

#include <cstdint>

namespace onnxflow {

// `bias` may be null (no Add).
void DequantizeAccumulatorRow(const int32_t* acc, int64_t n, float scale, const float* bias_c, bool relu, float* y);

}  // namespace onnxflow
