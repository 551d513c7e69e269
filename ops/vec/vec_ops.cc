#include "ops/vec/vec_ops.h"

#include "ops/nn/row_kernels.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/vec/vec_ops.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/vec/vec_ops-inl.h"

#if HWY_ONCE
namespace onnxflow {
namespace vec {

HWY_EXPORT(DotRowsImpl);
HWY_EXPORT(AccumulateRowsImpl);

void DotRowsF32(const float* x, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(DotRowsImpl)(x, m, m_stride, rows, n, out);
}

void AccumulateRowsF32(const float* w, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(AccumulateRowsImpl)(w, m, m_stride, rows, n, out);
}

// The row kernels' softmax exp (ops/nn/row_kernels.h), the one every float softmax uses.
float ExpShiftedF32(float* x, int64_t n, float shift) { return ExpShiftSum(x, shift, x, n); }

}  // namespace vec
}  // namespace onnxflow
#endif  // HWY_ONCE
