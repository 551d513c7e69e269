#include "ops/image/resize_rows.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/image/resize_rows.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/image/resize_rows-inl.h"

#if HWY_ONCE
namespace onnxflow {
namespace image {

HWY_EXPORT(WeightedRowSumImpl);

void WeightedRowSumF32(const float* const* rows, const float* w, int64_t taps, int64_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(WeightedRowSumImpl)(rows, w, taps, n, out);
}

}  // namespace image
}  // namespace onnxflow
#endif  // HWY_ONCE
