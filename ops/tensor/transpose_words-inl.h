// Highway body of TransposeWords (transpose_words.cc), compiled once per target. On AVX-512 each
// whole 16 x 16 tile is transposed in registers (ops/framework/transpose16x16-inl.h); the tiles'
// ragged edges, and every element on the other targets, move one at a time.
#if defined(ONNXFLOW_OPS_TENSOR_TRANSPOSE_WORDS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_TENSOR_TRANSPOSE_WORDS_INL_H_
#undef ONNXFLOW_OPS_TENSOR_TRANSPOSE_WORDS_INL_H_
#else
#define ONNXFLOW_OPS_TENSOR_TRANSPOSE_WORDS_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"
#include "ops/framework/transpose16x16-inl.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace tensor_ops {
namespace HWY_NAMESPACE {

inline void TransposeWordsScalar(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows,
                                 int64_t cols) {
  for (int64_t c = 0; c < cols; ++c) {
    for (int64_t r = 0; r < rows; ++r) dst[c * ds + r] = src[r * ss + c];
  }
}

inline void TransposeWordsImpl(const uint32_t* src, int64_t ss, uint32_t* dst, int64_t ds, int64_t rows,
                               int64_t cols) {
  namespace own = onnxflow::HWY_NAMESPACE;
  int64_t r = 0;
  if constexpr (own::kTransposesTiles) {
    for (; r + 16 <= rows; r += 16) {
      int64_t c = 0;
      for (; c + 16 <= cols; c += 16) {
        // The lanes are only moved, so 4-byte integers pass as floats.
        own::Transpose16x16(reinterpret_cast<const float*>(src + r * ss + c), ss,
                            reinterpret_cast<float*>(dst + c * ds + r), ds);
      }
      TransposeWordsScalar(src + r * ss + c, ss, dst + c * ds + r, ds, 16, cols - c);
    }
  }
  TransposeWordsScalar(src + r * ss, ss, dst + r, ds, rows - r, cols);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace tensor_ops
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // include guard
