// float <-> float16 array conversion, the conversions whole fp16 networks run most. Uses the
// CPU's F16C instructions through Highway where available (x86 AVX2 and up: one instruction per
// 8/16 values, round to nearest even like FloatToHalf); elsewhere the scalar functions of
// ops/framework/numeric.h. Results equal the scalar ones except for NaN payloads (the hardware
// keeps the high payload bits, the scalar path writes the canonical quiet NaN; both are NaN).
// bfloat16 is the upper half of a float: widening is a shift and narrowing a rounding add, in SIMD
// on every target, equal to the scalar BFloat16ToFloat / FloatToBFloat16 bit for bit (NaN too).
#pragma once

#include <cstdint>

namespace onnxflow {

void FloatToHalfArray(const float* in, uint16_t* out, int64_t n);
void HalfToFloatArray(const uint16_t* in, float* out, int64_t n);
void FloatToBFloat16Array(const float* in, uint16_t* out, int64_t n);
void BFloat16ToFloatArray(const uint16_t* in, float* out, int64_t n);

}  // namespace onnxflow
