#include "ops/ml/float_rows.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/ml/float_rows.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/ml/float_rows-inl.h"

#if HWY_ONCE
namespace onnxflow {
namespace ml {

HWY_EXPORT(BinarizeImpl);
HWY_EXPORT(ScaleRowImpl);
HWY_EXPORT(ScaleAllImpl);

void BinarizeF32(const float* x, int64_t n, float threshold, float* out) {
  HWY_DYNAMIC_DISPATCH(BinarizeImpl)(x, n, threshold, out);
}

void ScaleRowF32(const float* x, int64_t n, const float* offset, const float* scale, float* out) {
  HWY_DYNAMIC_DISPATCH(ScaleRowImpl)(x, n, offset, scale, out);
}

void ScaleAllF32(const float* x, int64_t n, float offset, float scale, float* out) {
  HWY_DYNAMIC_DISPATCH(ScaleAllImpl)(x, n, offset, scale, out);
}

}  // namespace ml
}  // namespace onnxflow
#endif  // HWY_ONCE
