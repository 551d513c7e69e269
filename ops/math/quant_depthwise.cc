// 8-bit depthwise convolution on channels-last tensors: weights packed tap-major, the taps of each
// output pixel as pointers (into the image, or to a row of x_zero in the padding), the SIMD body
// (quant_depthwise-inl.h) over one output row at a time, rows split over the cores.

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/math/quant_depthwise.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "ops/math/quant_depthwise-inl.h"

#if HWY_ONCE

#include <algorithm>
#include <cstring>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/math/qgemm.h"
#include "ops/math/quant_depthwise.h"

namespace onnxflow {

HWY_EXPORT(QDepthwisePixelsImpl);

bool IsQDepthwise(const ConvGeometry& g) {
  return g.kernel.size() == 2 && g.group == g.in_channels && g.out_channels == g.in_channels;
}

bool IsQDepthwiseWeight(const Shape& w, int64_t group) {
  return w.size() == 4 && w[1] == 1 && w[0] == group && group >= 1;
}

namespace {

int32_t ByteAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::kInt8 ? t.data<int8_t>()[i] : t.data<uint8_t>()[i];
}

}  // namespace

QDepthwiseWeights PackQDepthwise(const Tensor& w, const Tensor* w_zero) {
  QDepthwiseWeights p;
  p.channels = w.dim(0);
  p.taps = w.dim(2) * w.dim(3);
  p.cp = (p.channels + kQDepthwiseChannelPad - 1) / kQDepthwiseChannelPad * kQDepthwiseChannelPad;
  p.w.assign(static_cast<size_t>(p.taps * p.cp), 0);
  p.sums.assign(static_cast<size_t>(p.cp), 0);
  for (int64_t c = 0; c < p.channels; ++c) {
    const int32_t zero = w_zero == nullptr ? 0 : ByteAt(*w_zero, w_zero->size() == 1 ? 0 : c);
    for (int64_t t = 0; t < p.taps; ++t) {
      const int32_t v = ByteAt(w, c * p.taps + t) - zero;  // in [-255, 255]: an int16
      p.w[t * p.cp + c] = static_cast<int32_t>(static_cast<uint16_t>(static_cast<int16_t>(v)));
      p.sums[c] += v;
    }
  }
  // The VNNI layout: w' - o[c] in int8 (quant_depthwise.h).
  std::vector<int32_t> offsets(static_cast<size_t>(p.cp), 0);
  bool any_offset = false;
  for (int64_t c = 0; c < p.channels; ++c) {
    int32_t lo = 255, hi = -255;
    for (int64_t t = 0; t < p.taps; ++t) {
      const int32_t v = static_cast<int16_t>(static_cast<uint16_t>(p.w[t * p.cp + c]));
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
    if (lo < -128 || hi > 127) {
      offsets[c] = lo + 128;
      any_offset = true;
    }
  }
  if (any_offset) p.offsets = offsets;
  p.groups = (p.taps + 3) / 4;
  p.w4.assign(static_cast<size_t>(p.cp * p.groups * 4), 0);
  int8_t* dst = p.w4.data();
  for (int64_t c0 = 0; c0 < p.cp; c0 += QDepthwiseVnniUnit(p.cp, c0)) {
    const int64_t width = QDepthwiseVnniUnit(p.cp, c0);
    for (int64_t grp = 0; grp < p.groups; ++grp, dst += width * 4) {
      for (int64_t lane = 0; lane < width; ++lane) {
        const int64_t c = c0 + QDepthwiseVnniChannel(width, lane);
        for (int64_t s = 0; s < 4 && grp * 4 + s < p.taps; ++s) {
          const int32_t v = static_cast<int16_t>(static_cast<uint16_t>(p.w[(grp * 4 + s) * p.cp + c]));
          dst[lane * 4 + s] = static_cast<int8_t>(v - offsets[c]);
        }
      }
    }
  }
  return p;
}

void QDepthwiseConv(const ConvGeometry& g, const QDepthwiseWeights& w, const QDepthwiseArgs& args, int threads) {
  const int64_t channels = g.in_channels, cp = w.cp, taps = w.taps;
  const int64_t ih_n = g.in_spatial[0], iw_n = g.in_spatial[1], oh_n = g.out_spatial[0], ow_n = g.out_spatial[1];
  const int64_t kh_n = g.kernel[0], kw_n = g.kernel[1];
  // The folded bias: bias - x_zero * sum w' (quant_depthwise.h), in int64 then wrapped as the
  // int32 sums themselves wrap.
  // The VNNI path reads int8 activations flipped to uint8 (x + 128), which adds 128 * sum w' to
  // take off too, and wants both arrays in its lane order.
  const bool vnni = !w.w4.empty() && QGemmUsesVnni();
  const int32_t x_fold = args.x_zero + (vnni && args.x_signed ? 128 : 0);
  std::vector<int32_t> bias(static_cast<size_t>(cp), 0);
  std::vector<float> multiplier(static_cast<size_t>(cp), 0.0f);
  std::vector<int32_t> offsets(vnni && !w.offsets.empty() ? static_cast<size_t>(cp) : 0, 0);
  for (int64_t c0 = 0, i = 0; i < cp; ++i) {
    if (vnni && i == c0 + QDepthwiseVnniUnit(cp, c0)) c0 = i;
    const int64_t c = vnni ? c0 + QDepthwiseVnniChannel(QDepthwiseVnniUnit(cp, c0), i - c0) : i;
    if (c >= channels) continue;
    const int64_t b = (args.bias != nullptr ? args.bias[c] : 0) - int64_t{x_fold} * w.sums[c];
    bias[i] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(b)));
    multiplier[i] = args.multiplier[c];
    if (!offsets.empty()) offsets[i] = w.offsets[c];
  }
  QDepthwiseRow row;
  if (vnni) {
    row.w4 = w.w4.data();
    row.groups = w.groups;
    row.offsets = offsets.empty() ? nullptr : offsets.data();
  }
  row.w = w.w.data();
  row.bias = bias.data();
  row.multiplier = multiplier.data();
  row.channels = channels;
  row.cp = cp;
  row.taps = taps;
  row.x_signed = args.x_signed;
  row.y_signed = args.y_signed;
  row.y_zero = args.y_zero;

  // Every tap pointer is read for cp bytes. A row of x_zero stands for the padding; the pixels in
  // the last cp bytes of X are read from a copy with room after it.
  const std::vector<uint8_t> pad(static_cast<size_t>(cp), static_cast<uint8_t>(args.x_zero));
  const int64_t x_bytes = g.batch * ih_n * iw_n * channels;
  const int64_t tail_bytes = std::min(x_bytes, cp);
  const uint8_t* tail_start = args.x + x_bytes - tail_bytes;
  std::vector<uint8_t> tail(static_cast<size_t>(2 * cp), 0);
  std::memcpy(tail.data(), tail_start, static_cast<size_t>(tail_bytes));

  const auto pixels_kernel = HWY_DYNAMIC_DISPATCH(QDepthwisePixelsImpl);
  const int64_t rows = g.batch * oh_n;
  // A multiply-add counts half an operation here (a GEMM's counts a quarter, MacCost): this loop
  // does fewer per cycle than the GEMM, so the same work is more time. Then ShuffleNet's 14x14x272
  // and 28x28->14x14x272 layers split over 2 cores too (quant_depthwise_benchmark, best of 5,
  // twice: 28..33 -> 19..20 us and 25..26 -> 17..23 us against MacCost), the 7x7 ones (11..15 us)
  // stay on one core, and 28x28x136 splits either way (63 -> 32..48 us). On the whole model the
  // choice was within the noise of this shared machine (2 threads, p50 6.4..7.9 ms each).
  constexpr int64_t kDepthwiseMacsPerOperation = 2;
  // The columns whose window lies inside the image: their taps are the window's first pixel plus
  // fixed offsets, with no test per tap. Testing every tap of every pixel took half of the time of
  // MobileNetV2's 112x112x32 layer (perf, quant_depthwise_benchmark 112/32/1: 51% in this loop).
  // Inside: ow * stride - pad >= 0 and ow * stride - pad + (kw - 1) * dilation <= iw - 1.
  const int64_t last_start = iw_n - 1 - (kw_n - 1) * g.dilations[1] + g.pads_begin[1];  // of ow * stride
  const int64_t ow_in_begin = std::min(ow_n, (g.pads_begin[1] + g.strides[1] - 1) / g.strides[1]);
  const int64_t ow_in_end = last_start < 0 ? ow_in_begin
                                           : std::clamp(last_start / g.strides[1] + 1, ow_in_begin, ow_n);
  ParallelFor(threads, rows, ow_n * taps * channels / kDepthwiseMacsPerOperation, [&](int64_t r0, int64_t r1) {
    std::vector<const uint8_t*> tap_ptrs(static_cast<size_t>(ow_n * taps));
    for (int64_t r = r0; r < r1; ++r) {
      const int64_t n = r / oh_n, oh = r % oh_n;
      const uint8_t* image = args.x + n * ih_n * iw_n * channels;
      uint8_t* y = args.y + r * ow_n * channels;
      const int64_t ih_first = oh * g.strides[0] - g.pads_begin[0];
      const int64_t ih_end = ih_first + (kh_n - 1) * g.dilations[0] + 1;
      // Pixel ow's taps, each inside the image or the row of x_zero.
      auto edge_pixel = [&](int64_t ow, const uint8_t** t) {
        for (int64_t kh = 0; kh < kh_n; ++kh) {
          const int64_t ih = ih_first + kh * g.dilations[0];
          for (int64_t kw = 0; kw < kw_n; ++kw, ++t) {
            const int64_t iw = ow * g.strides[1] - g.pads_begin[1] + kw * g.dilations[1];
            *t = ih < 0 || ih >= ih_n || iw < 0 || iw >= iw_n ? pad.data() : image + (ih * iw_n + iw) * channels;
          }
        }
      };
      // Only the last pixels of X (its last cp bytes, which may span image rows when C is below
      // the padding) are read from the copy with room after it: rows whose window reaches them.
      const int64_t ih_last = std::min(ih_n - 1, ih_end - 1);
      const bool near_tail = ih_last >= 0 && image + (ih_last + 1) * iw_n * channels > tail_start;
      if (ih_first >= 0 && ih_end <= ih_n && !near_tail && ow_in_begin < ow_in_end) {
        // Every window row inside the image: the border columns have pointers of their own, the
        // columns between share the first one's, moved by the stride.
        const uint8_t** t = tap_ptrs.data();
        for (int64_t ow = 0; ow < ow_in_begin; ++ow, t += taps) edge_pixel(ow, t);
        for (int64_t ow = ow_in_end; ow < ow_n; ++ow, t += taps) edge_pixel(ow, t);
        const int64_t iw0 = ow_in_begin * g.strides[1] - g.pads_begin[1];
        for (int64_t kh = 0; kh < kh_n; ++kh) {
          const uint8_t* at = image + ((ih_first + kh * g.dilations[0]) * iw_n + iw0) * channels;
          for (int64_t kw = 0; kw < kw_n; ++kw, at += g.dilations[1] * channels) *t++ = at;
        }
        const int64_t right = ow_n - ow_in_end;
        pixels_kernel(row, QDepthwiseTaps{tap_ptrs.data(), taps, 0, 0}, ow_in_begin, y);
        pixels_kernel(row, QDepthwiseTaps{tap_ptrs.data() + (ow_in_begin + right) * taps, 0, g.strides[1] * channels, 0},
                      ow_in_end - ow_in_begin, y + ow_in_begin * channels);
        pixels_kernel(row, QDepthwiseTaps{tap_ptrs.data() + ow_in_begin * taps, taps, 0, 0}, right,
                      y + ow_in_end * channels);
        continue;
      }
      for (int64_t ow = 0; ow < ow_n; ++ow) edge_pixel(ow, tap_ptrs.data() + ow * taps);
      if (near_tail) {
        const uint8_t* x_end = args.x + x_bytes;
        for (const uint8_t*& at : tap_ptrs) {
          if (at >= tail_start && at < x_end) at = tail.data() + (at - tail_start);
        }
      }
      pixels_kernel(row, QDepthwiseTaps{tap_ptrs.data(), taps, 0, 0}, ow_n, y);
    }
  });
}

}  // namespace onnxflow

#endif  // HWY_ONCE
