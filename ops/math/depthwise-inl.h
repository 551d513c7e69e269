// SIMD row kernel of the depthwise convolution (conv_depthwise.cc): out[q] += w * in[q * stride].
// Compiled per CPU target through hwy/foreach_target.h.

#if defined(ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_
#undef ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_
#else
#define ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_
#endif

#include <cstdint>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

// Adds w * in[q * stride] to out[q] for q in [0, count). Stride 1 (the common depthwise case)
// streams full vectors; other strides use the scalar loop (a gather would cost as much).
void DepthwiseRowImpl(const float* HWY_RESTRICT in, float w, float* HWY_RESTRICT out, int64_t count,
                      int64_t stride) {
  int64_t q = 0;
  if (stride == 1) {
    const hn::ScalableTag<float> d;
    const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
    const auto wv = hn::Set(d, w);
    for (; q + lanes <= count; q += lanes) {
      hn::StoreU(hn::MulAdd(wv, hn::LoadU(d, in + q), hn::LoadU(d, out + q)), d, out + q);
    }
  }
  for (; q < count; ++q) out[q] += w * in[q * stride];
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#endif  // ONNXFLOW_OPS_MATH_DEPTHWISE_INL_H_
