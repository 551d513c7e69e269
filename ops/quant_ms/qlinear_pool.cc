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
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ops/framework/parallel.h"
#include "ops/framework/domains.h"
#include "ops/framework/shape.h"
#include "ops/math/conv_geometry.h"
#include "ops/nn/pool_geometry.h"
#include "ops/quant_ms/register.h"
#include "ops/quant_ms/qparams.h"

namespace onnxflow {
namespace quant_ms {
namespace {

template <typename T>
void GlobalAverage(const KernelContext& ctx, const T* x, T* y, int64_t n, int64_t c, int64_t plane,
                   bool channels_last, const QParams& qx, const QParams& qy) {
  const float lo = std::is_signed_v<T> ? -128.f : 0.f, hi = std::is_signed_v<T> ? 127.f : 255.f;
  const float mult = qx.scale / (qy.scale * static_cast<float>(plane));
  const int32_t zx = static_cast<int32_t>(qx.zero);
  if (!channels_last) {
    ParallelFor(ctx, n * c, plane, [&](int64_t b, int64_t e) {
      for (int64_t p = b; p < e; ++p) {
        const T* src = x + p * plane;
        int32_t sum = 0;
        for (int64_t i = 0; i < plane; ++i) sum += src[i];
        sum -= zx * static_cast<int32_t>(plane);
        y[p] = static_cast<T>(RoundSaturate(static_cast<float>(sum) * mult, qy.zero, lo, hi));
      }
    });
    return;
  }
  ParallelFor(ctx, n, plane * c, [&](int64_t b, int64_t e) {
    std::vector<int32_t> sums(c);
    for (int64_t img = b; img < e; ++img) {
      std::fill(sums.begin(), sums.end(), 0);
      const T* src = x + img * plane * c;
      for (int64_t i = 0; i < plane; ++i, src += c) {
        for (int64_t ch = 0; ch < c; ++ch) sums[ch] += src[ch];
      }
      for (int64_t ch = 0; ch < c; ++ch) {
        const int32_t s = sums[ch] - zx * static_cast<int32_t>(plane);
        y[img * c + ch] = static_cast<T>(RoundSaturate(static_cast<float>(s) * mult, qy.zero, lo, hi));
      }
    }
  });
}

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
    Shape out = {n, c};
    out.insert(out.end(), g.out.begin(), g.out.end());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, t, channels_last_ ? ChannelsLast(out) : out));
    if (t == DataType::kUint8) Average(ctx, x->data<uint8_t>(), y->mutable_data<uint8_t>(), g, qx, qy);
    else Average(ctx, x->data<int8_t>(), y->mutable_data<int8_t>(), g, qx, qy);
    return Status::Ok();
  }

 private:
  QLinearPoolKernel() = default;

  // Windows over up to 3 spatial dims (leading dims of size 1 pad the shape to 3).
  template <typename T>
  void Average(const KernelContext& ctx, const T* x, T* y, const PoolGeometry& g0, const QParams& qx,
               const QParams& qy) const {
    const float lo = std::is_signed_v<T> ? -128.f : 0.f, hi = std::is_signed_v<T> ? 127.f : 255.f;
    int64_t in[3] = {1, 1, 1}, out[3] = {1, 1, 1}, k[3] = {1, 1, 1}, s[3] = {1, 1, 1}, d[3] = {1, 1, 1};
    int64_t pb[3] = {0, 0, 0};
    const size_t dims = g0.in.size(), off = 3 - dims;
    for (size_t i = 0; i < dims; ++i) {
      in[off + i] = g0.in[i];
      out[off + i] = g0.out[i];
      k[off + i] = g0.kernel[i];
      s[off + i] = g0.strides[i];
      d[off + i] = g0.dilations[i];
      pb[off + i] = g0.pad_begin[i];
    }
    const int64_t c = g0.channels, in_plane = in[0] * in[1] * in[2], out_plane = out[0] * out[1] * out[2];
    const int64_t window = k[0] * k[1] * k[2];
    const int64_t kernel_cells = window;  // count_include_pad's divisor (see the top)
    const int32_t zx = static_cast<int32_t>(qx.zero);
    // The window of output cell (o0, o1, o2) in spatial offsets: the cells inside the image.
    auto window_of = [&](int64_t o0, int64_t o1, int64_t o2, std::vector<int64_t>* cells) {
      const int64_t st[3] = {o0 * s[0] - pb[0], o1 * s[1] - pb[1], o2 * s[2] - pb[2]};
      cells->clear();
      for (int64_t j0 = 0; j0 < k[0]; ++j0) {
        const int64_t i0 = st[0] + j0 * d[0];
        if (i0 < 0 || i0 >= in[0]) continue;
        for (int64_t j1 = 0; j1 < k[1]; ++j1) {
          const int64_t i1 = st[1] + j1 * d[1];
          if (i1 < 0 || i1 >= in[1]) continue;
          for (int64_t j2 = 0; j2 < k[2]; ++j2) {
            const int64_t i2 = st[2] + j2 * d[2];
            if (i2 >= 0 && i2 < in[2]) cells->push_back((i0 * in[1] + i1) * in[2] + i2);
          }
        }
      }
    };
    if (channels_last_) {
      // Channels-last: a window cell's channels are one run of bytes, summed into a row of int32
      // as whole vectors (walking one channel plane at a time strode over them a byte at a time: 0.9 ms
      // for a 3x3 pool to 14x14x136, ShuffleNet's).
      ParallelFor(ctx, g0.batch * out_plane, window * c, [&](int64_t b, int64_t e) {
        std::vector<float> sums(c);
        std::vector<int64_t> cells;
        for (int64_t cell = b; cell < e; ++cell) {
          const int64_t img = cell / out_plane, p = cell % out_plane;
          window_of(p / (out[1] * out[2]), (p / out[2]) % out[1], p % out[2], &cells);
          std::fill(sums.begin(), sums.end(), 0.0f);
          for (int64_t at : cells) {
            const T* src = x + (img * in_plane + at) * c;
            for (int64_t ch = 0; ch < c; ++ch) sums[ch] += qx.scale * static_cast<float>(src[ch] - zx);
          }
          const int64_t valid = static_cast<int64_t>(cells.size());
          const float count = static_cast<float>(count_include_pad_ ? kernel_cells : valid);
          T* dst = y + cell * c;
          if (count == 0.0f) {
            std::fill(dst, dst + c, static_cast<T>(RoundSaturate(qy.zero, 0.0f, lo, hi)));
            continue;
          }
          // The values are finite here: the inline form (a call per channel kept the loop scalar).
          for (int64_t ch = 0; ch < c; ++ch) {
            const float v = sums[ch] / count / qy.scale + qy.zero;
            dst[ch] = static_cast<T>(RoundSaturateFinite(v, 0.0f, lo, hi));
          }
        }
      });
      return;
    }
    ParallelFor(ctx, g0.batch * c, out_plane * window, [&](int64_t b, int64_t e) {
      std::vector<int64_t> cells;
      for (int64_t plane = b; plane < e; ++plane) {
        const T* src = x + plane * in_plane;
        for (int64_t p = 0; p < out_plane; ++p) {
          window_of(p / (out[1] * out[2]), (p / out[2]) % out[1], p % out[2], &cells);
          float sum = 0.0f;
          for (int64_t at : cells) sum += qx.scale * static_cast<float>(static_cast<int32_t>(src[at]) - zx);
          const int64_t count = count_include_pad_ ? kernel_cells : static_cast<int64_t>(cells.size());
          const float v = count > 0 ? sum / static_cast<float>(count) / qy.scale : 0.f;
          y[plane * out_plane + p] = static_cast<T>(RoundSaturate(v + qy.zero, 0.0f, lo, hi));
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

Status RegisterQLinearPool(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "QLinearGlobalAveragePool", 1, kOpenEnded,
                                             Make<QLinearPoolKernel>(true)));
  return registry.Register(kMsDomain, "QLinearAveragePool", 1, kOpenEnded,
                           Make<QLinearPoolKernel>(false));
}

}  // namespace quant_ms
}  // namespace onnxflow
