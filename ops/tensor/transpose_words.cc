#include "ops/tensor/transpose_words.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/tensor/transpose_words.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/tensor/transpose_words-inl.h"

#if HWY_ONCE
namespace onnxflow {
namespace tensor_ops {

HWY_EXPORT(TransposeWordsImpl);

void TransposeWords(const uint32_t* src, int64_t src_stride, uint32_t* dst, int64_t dst_stride, int64_t rows,
                    int64_t cols) {
  HWY_DYNAMIC_DISPATCH(TransposeWordsImpl)(src, src_stride, dst, dst_stride, rows, cols);
}

}  // namespace tensor_ops
}  // namespace onnxflow
#endif  // HWY_ONCE
