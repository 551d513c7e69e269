// Dynamic dispatch of the pooling fast path (bodies in pool_rows-inl.h).
#include "ops/nn/pool_rows.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/nn/pool_rows.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/nn/pool_rows-inl.h"

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(PoolRowsImpl);

void PoolRows(const PoolRowsPlan& plan, const float* x, float* y, int64_t begin, int64_t end, float* scratch) {
  HWY_DYNAMIC_DISPATCH(PoolRowsImpl)(plan, x, y, begin, end, scratch);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
