// com.microsoft QLinearGlobalAveragePool and QLinearAveragePool (version 1). Inputs X, x_scale,
// x_zero_point, y_scale, y_zero_point; attribute channels_last (0: [N, C, D...], 1: [N, D..., C]);
// QLinearAveragePool adds AveragePool's attributes (kernel_shape, strides, pads, auto_pad,
// ceil_mode, count_include_pad). Sums are exact in int32 over x - x_zero_point (a padded cell
// is the zero point, so counts as 0); one float multiply requantizes the mean:
//   global:  y = sat(round_half_even(sum * x_scale / (count * y_scale)) + y_zero_point)
// QLinearAveragePool computes as ONNX Runtime's does, which users compare a quantized model with:
// the float sum of the dequantized cells x_scale * (x - x_zero_point), in window order, then
//   y = sat(round_half_even(sum / count / y_scale + y_zero_point))
// (the zero point inside the rounding: they differ on exact ties); and with count_include_pad its
// count is the whole kernel, also for a ceil_mode window that runs past the padding (ONNX
// Runtime's float AveragePool counts only the cells inside the padded input there).
//
// The window sums run on dequantized input rows, a whole row of outputs per tap, in SIMD (AddRuns,
// qlinear_simd.h): each output still adds its cells in window order, depth, then height, then
// width, from 0. A padded cell adds 0.0f, which leaves a float sum as it is, so channels-first rows
// carry their padding and every output of a row takes the same taps. A row with a stride is split
// into its stride's phases (cells r, r + s, ...), so that a tap is one contiguous run. A 3x3
// stride-2 pool of 64 x 112 x 112 bytes: 0.56-0.65 ms on one core, against 6.5 ms when each
// output pixel listed its window's cells (ONNX Runtime 1.30: 3.1-5.0 ms).
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/math/conv_geometry.h"
#include "ops/nn/pool_geometry.h"
#include "ops/quant/quant_simd.h"
#include "ops/quant_ms/register.h"
#include "ops/quant_ms/qparams.h"

namespace onnxflow {
namespace quant_ms {
namespace {

// Sums of a plane's bytes in int32 chunks this long cannot overflow (255 * 2^23 < 2^31).
constexpr int64_t kExactChunk = int64_t{1} << 23;

template <typename T>
void GlobalAverage(const KernelContext& ctx, const T* x, T* y, int64_t n, int64_t c, int64_t plane,
                   bool channels_last, const QParams& qx, const QParams& qy) {
  const float lo = std::is_signed_v<T> ? -128.f : 0.f, hi = std::is_signed_v<T> ? 127.f : 255.f;
  const float mult = qx.scale / (qy.scale * static_cast<float>(plane));
  const int64_t zx = static_cast<int64_t>(qx.zero);
  auto requantize = [&](int64_t sum) {
    return static_cast<T>(RoundSaturate(static_cast<float>(sum - zx * plane) * mult, qy.zero, lo, hi));
  };
  if (!channels_last) {
    ParallelFor(ctx, n * c, plane, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) y[p] = requantize(SumOfBytes(x + p * plane, plane));
    });
    return;
  }
  ParallelFor(ctx, n, plane * c, [&](int64_t b, int64_t e) {
    std::vector<int64_t> sums(c);
    std::vector<int32_t> part(c);
    for (int64_t img = b; img < e; ++img) {
      std::fill(sums.begin(), sums.end(), 0);
      const T* src = x + img * plane * c;
      for (int64_t first = 0; first < plane; first += kExactChunk) {
        std::fill(part.begin(), part.end(), 0);
        const int64_t last = std::min(plane, first + kExactChunk);
        for (int64_t i = first; i < last; ++i) AddBytes(src + i * c, c, part.data());
        for (int64_t ch = 0; ch < c; ++ch) sums[ch] += part[ch];
      }
      for (int64_t ch = 0; ch < c; ++ch) y[img * c + ch] = requantize(sums[ch]);
    }
  });
}

// The taps j < k of one window dimension that land inside the input: start + j * dilation in
// [0, in) for j in [begin, end).
struct TapRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

TapRange ValidTaps(int64_t start, int64_t k, int64_t dilation, int64_t in) {
  const WindowTaps t = TapsOf(start, k, dilation, in, 0);
  return {t.lo, t.hi};
}

// The pooling geometry over exactly 3 spatial dims (leading dims of size 1 pad a 1-D or 2-D pool).
struct Geometry3 {
  int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1};
  int64_t pb[3] = {0, 0, 0};
  int64_t batch = 0, channels = 0;

  explicit Geometry3(const PoolGeometry& g) : batch(g.batch), channels(g.channels) {
    const size_t dims = g.in.size(), off = 3 - dims;
    for (size_t i = 0; i < dims; ++i) {
      in[off + i] = g.in[i];
      out[off + i] = g.out[i];
      k[off + i] = g.kernel[i];
      s[off + i] = g.strides[i];
      d[off + i] = g.dilations[i];
      pb[off + i] = g.pad_begin[i];
    }
  }
  int64_t in_plane() const { return in[0] * in[1] * in[2]; }
  int64_t window() const { return k[0] * k[1] * k[2]; }
  TapRange Taps(int dim, int64_t o) const { return ValidTaps(o * s[dim] - pb[dim], k[dim], d[dim], in[dim]); }
};

template <typename T>
void Dequantize(const T* x, int64_t n, const QParams& q, float* y) {
  if constexpr (std::is_signed_v<T>) DequantizeInt8ToFloat(x, n, q.scale, q.zero, y);
  else DequantizeUint8ToFloat(x, n, q.scale, q.zero, y);
}

// Runs are added in whole vectors of the widest target (AVX-512: 16 floats); a scalar tail of up to 15
// elements per call was a third of a 56-wide row's time.
constexpr int64_t kLanePad = 16;
int64_t RoundUp(int64_t n, int64_t m) { return (n + m - 1) / m * m; }

class QLinearPoolKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, bool global) {
    auto k = std::unique_ptr<QLinearPoolKernel>(new QLinearPoolKernel());
    k->global_ = global;
    k->channels_last_ = info.GetInt("channels_last", 0) != 0;
    if (!global) {
      ONNXFLOW_ASSIGN_OR_RETURN(k->attrs_, PoolAttributes::Parse(info));
      k->count_include_pad_ = info.GetInt("count_include_pad", 0) != 0;
      if (k->attrs_.kernel.size() > 3) return Unimplemented("QLinearAveragePool over more than 3 spatial dims");
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    const DataType t = x->dtype();
    ONNXFLOW_RETURN_IF_ERROR(CheckQuantType(t, "X"));
    if (x->rank() < 3) return InvalidArgument("input 'X' must have rank >= 3, got " + ShapeToString(x->shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qx, ReadQParams(ctx, 1, 2, t, "x_scale", "x_zero_point"));
    ONNXFLOW_ASSIGN_OR_RETURN(QParams qy, ReadQParams(ctx, 3, 4, t, "y_scale", "y_zero_point"));
    const Shape nchw = channels_last_ ? ChannelsFirst(x->shape()) : x->shape();
    const int64_t n = nchw[0], c = nchw[1], plane = SizeFromDim(nchw, 2);
    if (global_) {
      Shape out = channels_last_ ? x->shape() : nchw;
      for (size_t i = channels_last_ ? 1 : 2; i < out.size() - (channels_last_ ? 1 : 0); ++i) out[i] = 1;
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, t, out));
      if (plane == 0) return InvalidArgument("input 'X' has no spatial elements: " + ShapeToString(x->shape()));
      if (t == DataType::kUint8) {
        GlobalAverage(ctx, x->data<uint8_t>(), y->mutable_data<uint8_t>(), n, c, plane, channels_last_, qx, qy);
      } else {
        GlobalAverage(ctx, x->data<int8_t>(), y->mutable_data<int8_t>(), n, c, plane, channels_last_, qx, qy);
      }
      return Status::Ok();
    }
    if (nchw.size() - 2 != attrs_.kernel.size()) {
      return InvalidArgument("kernel_shape has " + std::to_string(attrs_.kernel.size()) +
                             " dims but input 'X' has shape " + ShapeToString(x->shape()));
    }
    ONNXFLOW_ASSIGN_OR_RETURN(PoolGeometry g, ComputePoolGeometry(attrs_, nchw));
    ONNXFLOW_RETURN_IF_ERROR(CheckWindow(Geometry3(g)));
    Shape out = {n, c};
    out.insert(out.end(), g.out.begin(), g.out.end());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, t, channels_last_ ? ChannelsLast(out) : out));
    if (y->size() == 0) return Status::Ok();
    if (t == DataType::kUint8) Average(ctx, x->data<uint8_t>(), y->mutable_data<uint8_t>(), Geometry3(g), qx, qy);
    else Average(ctx, x->data<int8_t>(), y->mutable_data<int8_t>(), Geometry3(g), qx, qy);
    return Status::Ok();
  }

 private:
  QLinearPoolKernel() = default;

  template <typename T>
  void Average(const KernelContext& ctx, const T* x, T* y, const Geometry3& g, const QParams& qx,
               const QParams& qy) const {
    // Each output column's width taps, and its count: the whole kernel (count_include_pad) or its
    // taps inside the input, which RowCount then multiplies by the output row's (depth, height) taps.
    std::vector<TapRange> cols(g.out[2]);
    std::vector<float> counts(g.out[2]);
    for (int64_t o = 0; o < g.out[2]; ++o) {
      cols[o] = g.Taps(2, o);
      counts[o] = static_cast<float>(count_include_pad_ ? g.window() : cols[o].size());
    }
    if (channels_last_) AverageChannelsLast(ctx, x, y, g, cols, counts, qx, qy);
    else AverageChannelsFirst(ctx, x, y, g, counts, qx, qy);
  }

  // A window of at most 2^31 taps, and a task's scratch (the padded row of the first to the last
  // window, times the ring of rows one window spans) of at most 2^28 floats: kernels and pads of 2^40
  // in a hostile model would otherwise ask for terabytes or loop for hours. In double: the products
  // may pass INT64_MAX.
  Status CheckWindow(const Geometry3& g) const {
    const double taps = static_cast<double>(g.k[0]) * static_cast<double>(g.k[1]) * static_cast<double>(g.k[2]);
    const double row = static_cast<double>(g.out[2] - 1) * static_cast<double>(g.s[2]) +
                       static_cast<double>(g.k[2] - 1) * static_cast<double>(g.d[2]) + 1;
    const double ring = static_cast<double>(g.k[1] - 1) * static_cast<double>(g.d[1]) + 1;
    if (taps > 0x1p31 || row * (ring + 1) > 0x1p28) {
      return ResourceExhausted("QLinearAveragePool: attributes 'kernel_shape' " + ShapeToString(attrs_.kernel) +
                               ", 'dilations' and 'pads' " + ShapeToString(attrs_.pads) +
                               " make a window past 2^31 taps or a scratch row ring past 2^28 floats");
    }
    return Status::Ok();
  }

  // The factor of an output row's column counts (whole numbers: the product is exact).
  float RowCount(const TapRange& r0, const TapRange& r1) const {
    return count_include_pad_ ? 1.0f : static_cast<float>(r0.size() * r1.size());
  }

  // One task per (image, channel) plane. Each input row a window reads is dequantized once, padded,
  // into the stride's phases, and kept in a ring of as many rows as a window spans; each output
  // row then adds one run per tap to its sums.
  template <typename T>
  void AverageChannelsFirst(const KernelContext& ctx, const T* x, T* y, const Geometry3& g,
                            const std::vector<float>& counts, const QParams& qx, const QParams& qy) const {
    const int64_t stride = g.s[2], out_w = g.out[2], in_w = g.in[2];
    // The padded row: every cell any output reads, from the first output's first tap on.
    const int64_t padded = (out_w - 1) * stride + (g.k[2] - 1) * g.d[2] + 1;
    const int64_t phase_len = (padded + stride - 1) / stride;
    // Runs are added kLanePad at a time (the sums past out_w are never read), so a ring row has room
    // for the last tap's run to end there.
    const int64_t run = RoundUp(out_w, kLanePad), slot_len = stride * phase_len + run;
    std::vector<int64_t> taps(g.k[2]);
    for (int64_t j = 0; j < g.k[2]; ++j) {
      const int64_t at = j * g.d[2];
      taps[j] = (at % stride) * phase_len + at / stride;
    }
    const int64_t copy_begin = std::min(padded, g.pb[2]), copy_end = std::min(padded, g.pb[2] + in_w);
    const int64_t ring = (g.k[1] - 1) * g.d[1] + 1;  // rows one window spans
    const int64_t out_plane = g.out[0] * g.out[1] * out_w;
    ParallelFor(ctx, g.batch * g.channels, out_plane * g.window(), [&](int64_t b, int64_t e) {
      std::vector<float> row(stride > 1 ? padded : 0, 0.0f), slots(ring * slot_len, 0.0f), sums(run);
      std::vector<int64_t> held(ring);
      for (int64_t p = b; p < e; ++p) {
        const T* src = x + p * g.in_plane();
        std::fill(held.begin(), held.end(), -1);
        // Input row (i0, i1), dequantized and split into phases; pads stay 0.
        auto phases_of = [&](int64_t i0, int64_t i1) -> const float* {
          const int64_t flat = i0 * g.in[1] + i1, slot = flat % ring;
          float* out = slots.data() + slot * slot_len;
          if (held[slot] == flat) return out;
          held[slot] = flat;
          if (copy_end > copy_begin) {
            float* dst = stride > 1 ? row.data() : out;
            Dequantize(src + flat * in_w + (copy_begin - g.pb[2]), copy_end - copy_begin, qx, dst + copy_begin);
            if (stride > 1) SplitPhases(row.data(), padded, stride, phase_len, out);
          }
          return out;
        };
        T* dst = y + p * out_plane;
        for (int64_t o0 = 0; o0 < g.out[0]; ++o0) {
          const TapRange r0 = g.Taps(0, o0);
          for (int64_t o1 = 0; o1 < g.out[1]; ++o1, dst += out_w) {
            const TapRange r1 = g.Taps(1, o1);
            std::fill(sums.begin(), sums.end(), 0.0f);
            for (int64_t j0 = r0.begin; j0 < r0.end; ++j0) {
              for (int64_t j1 = r1.begin; j1 < r1.end; ++j1) {
                const int64_t i0 = o0 * g.s[0] - g.pb[0] + j0 * g.d[0], i1 = o1 * g.s[1] - g.pb[1] + j1 * g.d[1];
                AddRuns(phases_of(i0, i1), taps.data(), g.k[2], run, sums.data());
              }
            }
            RequantizeMeans(sums.data(), counts.data(), false, RowCount(r0, r1), out_w, qy.scale, qy.zero, dst);
          }
        }
      }
    });
  }

  // One task per run of output rows; each valid (depth, height) tap dequantizes its input row of
  // pixels, and each output pixel adds its valid width taps' channel runs (kLanePad wide: a pixel's
  // sums are that far apart, and the row has room for the last pixel's run).
  template <typename T>
  void AverageChannelsLast(const KernelContext& ctx, const T* x, T* y, const Geometry3& g,
                           const std::vector<TapRange>& cols, const std::vector<float>& counts, const QParams& qx,
                           const QParams& qy) const {
    const int64_t c = g.channels, run = RoundUp(c, kLanePad), out_w = g.out[2], in_w = g.in[2];
    const int64_t out_rows = g.batch * g.out[0] * g.out[1];
    // Output pixel o's taps are taps[first[o]..first[o + 1]): offsets of their channel runs in a row.
    std::vector<int64_t> taps, first(out_w + 1, 0);
    for (int64_t o = 0; o < out_w; ++o) {
      for (int64_t j2 = cols[o].begin; j2 < cols[o].end; ++j2) taps.push_back((o * g.s[2] - g.pb[2] + j2 * g.d[2]) * c);
      first[o + 1] = static_cast<int64_t>(taps.size());
    }
    ParallelFor(ctx, out_rows, out_w * g.window() * c, [&](int64_t b, int64_t e) {
      std::vector<float> row(in_w * c + run, 0.0f), sums(out_w * run);
      for (int64_t r = b; r < e; ++r) {
        const int64_t img = r / (g.out[0] * g.out[1]), o0 = r / g.out[1] % g.out[0], o1 = r % g.out[1];
        const TapRange r0 = g.Taps(0, o0), r1 = g.Taps(1, o1);
        std::fill(sums.begin(), sums.end(), 0.0f);
        for (int64_t j0 = r0.begin; j0 < r0.end; ++j0) {
          for (int64_t j1 = r1.begin; j1 < r1.end; ++j1) {
            const int64_t i0 = o0 * g.s[0] - g.pb[0] + j0 * g.d[0], i1 = o1 * g.s[1] - g.pb[1] + j1 * g.d[1];
            Dequantize(x + ((img * g.in[0] + i0) * g.in[1] + i1) * in_w * c, in_w * c, qx, row.data());
            for (int64_t o = 0; o < out_w; ++o) {
              AddRuns(row.data(), taps.data() + first[o], first[o + 1] - first[o], run, sums.data() + o * run);
            }
          }
        }
        for (int64_t o = 0; o < out_w; ++o) {
          T* dst = y + (r * out_w + o) * c;
          RequantizeMeans(sums.data() + o * run, &counts[o], true, RowCount(r0, r1), c, qy.scale, qy.zero, dst);
        }
      }
    });
  }

  bool global_ = false;
  bool channels_last_ = false;
  bool count_include_pad_ = false;
  PoolAttributes attrs_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQLinearPool(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "QLinearGlobalAveragePool", 1, kOpenEnded,
                                             Make<QLinearPoolKernel>(true)));
  return registry.Register(kMsDomain, "QLinearAveragePool", 1, kOpenEnded,
                           Make<QLinearPoolKernel>(false));
}

}  // namespace quant_ms
}  // namespace onnxflow
