// Dynamic dispatch of the pooling row kernels (bodies in pool_rows-inl.h).
#include "ops/nn/pool_rows.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/nn/pool_rows.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/nn/pool_rows-inl.h"

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(MaxTapsRowImpl);
HWY_EXPORT(SumTapsRowImpl);

void MaxTapsRow(const float* const* rows, int64_t nrows, int64_t kw, int64_t dw, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(MaxTapsRowImpl)(rows, nrows, kw, dw, out, n);
}
void SumTapsRow(const float* const* rows, int64_t nrows, int64_t kw, int64_t dw, float scale, float* out, int64_t n) {
  HWY_DYNAMIC_DISPATCH(SumTapsRowImpl)(rows, nrows, kw, dw, scale, out, n);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
