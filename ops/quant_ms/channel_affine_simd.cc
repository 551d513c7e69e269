#include "ops/quant_ms/channel_affine.h"

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/quant_ms/channel_affine_simd.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep
#include "hwy/highway.h"
#include "ops/quant_ms/channel_affine-inl.h"

#if HWY_ONCE
namespace onnxflow {

HWY_EXPORT(ChannelAffineLastAxisImpl);

void ChannelAffineLastAxis(const uint8_t* x, bool x_signed, const float* params, int64_t channels, int64_t pixels,
                           bool y_signed, uint8_t* y) {
  HWY_DYNAMIC_DISPATCH(ChannelAffineLastAxisImpl)(x, x_signed, params, channels, pixels, y_signed, y);
}

}  // namespace onnxflow
#endif  // HWY_ONCE
