// ConvInteger's depthwise layers (NCHW, int32 out: a dynamically quantized MobileNet or
// EfficientNet, DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul per layer) on the float
// depthwise plane kernel. The integer GEMM sees one output column per group there, and ran those
// layers at about 1 multiply-add per nanosecond: 15 of a dynamic-uint8 MobileNetV2's 27.5 ms.
//
// Exact: (x - x_zero) and (w - w_zero) both lie in [-255, 255], so a product is at most 65025 and
// a sum of up to kExactFloatTaps of them stays below 2^24, where every integer is a float and every
// partial sum (any order, fused or not) is exact.
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/tensor.h"
#include "ops/math/conv_geometry.h"

namespace onnxflow {

constexpr int64_t kExactFloatTaps = (int64_t{1} << 24) / (255 * 255);  // 258

// Whether IntegerDepthwiseConv takes g: 1-D or 2-D, one input channel per group, few enough taps.
bool UsesIntegerDepthwise(const ConvGeometry& g);
// The same from W's shape and the group attribute alone (W is then not packed for the GEMM at load).
bool IsIntegerDepthwiseWeight(const Shape& w, int64_t group);

// y[n, m] = sum over the window of (x - x_zero) * (w[m] - w_zero[m]); x and w int8 or uint8,
// w_zero one value or one per output channel; `threads` cores.
void IntegerDepthwiseConv(const ConvGeometry& g, const Tensor& x, int32_t x_zero, const Tensor& w,
                          const std::vector<int32_t>& w_zero, int32_t* y, int threads);

}  // namespace onnxflow
