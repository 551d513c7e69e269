// The 8- and 16-bit quantization loops with one scale and zero point for a run of elements (per-tensor
// and per-axis rows), in SIMD through Highway. Same arithmetic as the scalar path in float:
//   quantize:   y = clamp(round_half_even(x / scale) + zero_point, lo, hi), NaN -> lo
//   dequantize: y = (float(x) - zero_point) * scale
#pragma once

#include <cstdint>

namespace onnxflow {

void QuantizeFloatToUint8(const float* x, int64_t n, float scale, float zero_point, uint8_t* y);
void QuantizeFloatToInt8(const float* x, int64_t n, float scale, float zero_point, int8_t* y);
void DequantizeUint8ToFloat(const uint8_t* x, int64_t n, float scale, float zero_point, float* y);
void DequantizeInt8ToFloat(const int8_t* x, int64_t n, float scale, float zero_point, float* y);
// 16-bit activations (ONNX Runtime's QDQ with uint16 / int16, com.microsoft or opset 21): the
// same loops. Exact in float: a zero point and a rounded quotient in 16-bit range need 17 bits.
void QuantizeFloatToUint16(const float* x, int64_t n, float scale, float zero_point, uint16_t* y);
void QuantizeFloatToInt16(const float* x, int64_t n, float scale, float zero_point, int16_t* y);
void DequantizeUint16ToFloat(const uint16_t* x, int64_t n, float scale, float zero_point, float* y);
void DequantizeInt16ToFloat(const int16_t* x, int64_t n, float scale, float zero_point, float* y);
// y = x for floats that hold integers of magnitude below 2^31 (an integer sum computed in float).
void IntegralFloatToInt32(const float* x, int64_t n, int32_t* y);
// lo = min(0, min x), hi = max(0, max x) with NaNs skipped: DynamicQuantizeLinear's range.
void FloatRangeWithZero(const float* x, int64_t n, float* lo, float* hi);
// DynamicQuantizeLinear's uint8 parameters for that range (lo <= 0 <= hi), in float:
//   scale = (hi - lo) / 255 (1/255 when the range is empty: every value is then 0 and quantizes to
//   the zero point 0 whatever the scale), zero_point = round_half_even(clamp(-lo / scale, 0, 255)).
void DynamicUint8Params(float lo, float hi, float* scale, float* zero_point);

}  // namespace onnxflow
