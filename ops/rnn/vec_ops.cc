#include "ops/rnn/vec_ops.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/rnn/vec_ops.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/rnn/vec_ops-inl.h"

#if HWY_ONCE
namespace onnxflow {
namespace rnn {

HWY_EXPORT(DotRowsImpl);

void DotRowsF32(const float* x, const float* m, int64_t m_stride, int64_t rows, int64_t n, float* out) {
  HWY_DYNAMIC_DISPATCH(DotRowsImpl)(x, m, m_stride, rows, n, out);
}

}  // namespace rnn
}  // namespace onnxflow
#endif  // HWY_ONCE
