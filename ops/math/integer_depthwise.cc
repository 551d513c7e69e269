#include "ops/math/integer_depthwise.h"

#include "ops/math/conv_depthwise.h"
#include "ops/quant/quant_simd.h"

namespace onnxflow {

bool UsesIntegerDepthwise(const ConvGeometry& g) { return IsDepthwise(g) && g.kernel_size() <= kExactFloatTaps; }

bool IsIntegerDepthwiseWeight(const Shape& w, int64_t group) {
  if ((w.size() != 3 && w.size() != 4) || w[1] != 1 || group <= 1) return false;
  int64_t taps = 1;
  for (size_t d = 2; d < w.size(); ++d) taps *= w[d];
  return taps <= kExactFloatTaps;
}

void IntegerDepthwiseConv(const ConvGeometry& g, const Tensor& x, int32_t x_zero, const Tensor& w,
                          const std::vector<int32_t>& w_zero, int32_t* y, int threads) {
  // w - w_zero as floats: a few thousand values, so made per run rather than kept beside W.
  const int64_t taps = g.kernel_size(), m_n = g.out_channels;
  std::vector<float> wf(static_cast<size_t>(m_n * taps));
  const bool w_signed = w.dtype() == DataType::kInt8;
  const uint8_t* wd = static_cast<const uint8_t*>(w.raw_data());
  for (int64_t m = 0; m < m_n; ++m) {
    const int32_t zero = w_zero.empty() ? 0 : w_zero[w_zero.size() > 1 ? m : 0];
    for (int64_t t = 0; t < taps; ++t) {
      const uint8_t b = wd[m * taps + t];
      wf[m * taps + t] = static_cast<float>((w_signed ? static_cast<int8_t>(b) : b) - zero);
    }
  }
  const int64_t in_plane = g.in_size(), out_plane = g.out_size();
  const uint8_t* xd = static_cast<const uint8_t*>(x.raw_data());
  const bool x_signed = x.dtype() == DataType::kInt8;
  const float zero = static_cast<float>(x_zero);
  DepthwisePlaneIo io;
  io.load = [&](int64_t index, float* in) {
    const uint8_t* src = xd + index * in_plane;
    if (x_signed) {
      DequantizeInt8ToFloat(reinterpret_cast<const int8_t*>(src), in_plane, 1.0f, zero, in);
    } else {
      DequantizeUint8ToFloat(src, in_plane, 1.0f, zero, in);
    }
  };
  io.store = [&](int64_t plane, const float* out) { IntegralFloatToInt32(out, out_plane, y + plane * out_plane); };
  DepthwiseConvPlanes(g, io, wf.data(), threads);
}

}  // namespace onnxflow
