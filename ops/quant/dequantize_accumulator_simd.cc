#include "ops/quant/dequantize_accumulator.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/quant/dequantize_accumulator_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/quant/dequantize_accumulator-inl.h"

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(DequantizeAccumulatorImpl);

void DequantizeAccumulatorRow(const int32_t* acc, int64_t n, float scale, const float* bias_c, const float* clamp,
                              float* y) {
  HWY_DYNAMIC_DISPATCH(DequantizeAccumulatorImpl)(acc, n, scale, bias_c, clamp, y);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
