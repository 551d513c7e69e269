// com.onnxflow MaxPoolNhwc: MaxPool on channels-last 2-D 8-bit values (X [N, H, W, C], int8 or
// uint8), with MaxPool's attributes (kernel_shape, strides, pads, dilations, auto_pad,
// ceil_mode). graph/quant_layout.cc writes it for the 8-bit MaxPool of a channels-last region.
// An output pixel is the lane-wise maximum of the input pixels its window covers, each a run of C
// bytes: vector maxima over whole pixels (com.microsoft NhwcMaxPool, in ops/contrib, walks the
// window's coordinates for every pixel and compares one byte at a time).

#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "ops/quant_ms/qlinear_maxpool_nhwc.cc"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace onnxflow {
namespace quant_ms {
namespace HWY_NAMESPACE {
namespace hn = hwy::HWY_NAMESPACE;

template <typename T>
void MaxOfRows(const uint8_t* const* rows, int64_t count, int64_t channels, uint8_t* out) {
  const hn::ScalableTag<T> d;
  const int64_t lanes = static_cast<int64_t>(hn::Lanes(d));
  const T* const* src = reinterpret_cast<const T* const*>(rows);
  T* dst = reinterpret_cast<T*>(out);
  int64_t c = 0;
  for (; c + lanes <= channels; c += lanes) {
    auto v = hn::LoadU(d, src[0] + c);
    for (int64_t t = 1; t < count; ++t) v = hn::Max(v, hn::LoadU(d, src[t] + c));
    hn::StoreU(v, d, dst + c);
  }
  // The rest in 16-byte vectors, the last one overlapping what is done (a maximum taken twice is
  // the same): with AVX-512's 64 lanes, 24 channels (ShuffleNet's stem) went one byte at a time.
  const hn::CappedTag<T, 16> d16;
  if (c < channels && channels >= 16 && hn::Lanes(d16) == 16) {
    for (; c < channels; c += 16) {
      const int64_t at = std::min(c, channels - 16);
      auto v = hn::LoadU(d16, src[0] + at);
      for (int64_t t = 1; t < count; ++t) v = hn::Max(v, hn::LoadU(d16, src[t] + at));
      hn::StoreU(v, d16, dst + at);
    }
  }
  for (; c < channels; ++c) {
    T v = src[0][c];
    for (int64_t t = 1; t < count; ++t) v = src[t][c] > v ? src[t][c] : v;
    dst[c] = v;
  }
}

// out[c] = max over t < count of rows[t][c] (count >= 1), as int8 or uint8.
void MaxOfRowsImpl(const uint8_t* const* rows, int64_t count, int64_t channels, bool is_signed, uint8_t* out) {
  if (is_signed) {
    MaxOfRows<int8_t>(rows, count, channels, out);
  } else {
    MaxOfRows<uint8_t>(rows, count, channels, out);
  }
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace quant_ms
}  // namespace onnxflow
HWY_AFTER_NAMESPACE();

#if HWY_ONCE

#include <cstring>
#include <vector>

#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/framework/window_geometry.h"
#include "ops/quant_ms/register.h"

namespace onnxflow {
namespace quant_ms {

HWY_EXPORT(MaxOfRowsImpl);

namespace {

class MaxPoolNhwcKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::unique_ptr<MaxPoolNhwcKernel>(new MaxPoolNhwcKernel());
    k->kernel_ = info.GetInts("kernel_shape");
    if (k->kernel_.size() != 2) return InvalidArgument("MaxPoolNhwc: kernel_shape must have 2 values");
    k->strides_ = info.GetInts("strides", {1, 1});
    k->dilations_ = info.GetInts("dilations", {1, 1});
    k->pads_ = info.GetInts("pads", {0, 0, 0, 0});
    k->auto_pad_ = info.GetString("auto_pad", "NOTSET");
    k->ceil_ = info.GetInt("ceil_mode", 0) != 0;
    if (k->strides_.size() != 2 || k->dilations_.size() != 2 || k->pads_.size() != 4) {
      return InvalidArgument("MaxPoolNhwc: strides, dilations and pads must match kernel_shape's rank");
    }
    for (int d = 0; d < 2; ++d) {
      // Bounded so that no window arithmetic overflows on a hostile node.
      constexpr int64_t kMax = int64_t{1} << 31;
      if (k->kernel_[d] < 1 || k->strides_[d] < 1 || k->dilations_[d] < 1 || k->pads_[d] < 0 || k->pads_[d + 2] < 0 ||
          k->kernel_[d] > 1024 || k->strides_[d] > kMax || k->dilations_[d] > kMax || k->pads_[d] > kMax ||
          k->pads_[d + 2] > kMax) {
        return InvalidArgument("MaxPoolNhwc: kernel, strides and dilations must be positive, pads non-negative, "
                               "all below 2^31 (kernel 1024)");
      }
    }
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    if (x->rank() != 4) return InvalidArgument("MaxPoolNhwc: X must have rank 4, got " + ShapeToString(x->shape()));
    if (x->dtype() != DataType::kUint8 && x->dtype() != DataType::kInt8) {
      return InvalidArgument("MaxPoolNhwc: X must be int8 or uint8");
    }
    const int64_t batch = x->dim(0), channels = x->dim(3);
    int64_t in[2], out[2], begin[2];
    for (int d = 0; d < 2; ++d) {
      in[d] = x->dim(d + 1);
      const int64_t span = DilatedWindow(kernel_[d], dilations_[d]);
      int64_t pb = pads_[d], pe = pads_[d + 2];
      if (auto_pad_ == "VALID") {
        pb = pe = 0;
      } else if (auto_pad_ == "SAME_UPPER" || auto_pad_ == "SAME_LOWER") {
        const AxisPads p = SamePads(in[d], strides_[d], span, auto_pad_ == "SAME_UPPER");
        pb = p.begin;
        pe = p.end;
      }
      const int64_t room = in[d] + pb + pe - span;
      if (room < 0) return InvalidArgument("MaxPoolNhwc: the window is larger than the padded input");
      out[d] = (ceil_ ? (room + strides_[d] - 1) / strides_[d] : room / strides_[d]) + 1;
      if (ceil_ && (out[d] - 1) * strides_[d] >= in[d] + pb) --out[d];
      begin[d] = pb;
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), {batch, out[0], out[1], channels}));
    if (y->size() == 0) return Status::Ok();
    const bool is_signed = x->dtype() == DataType::kInt8;
    const uint8_t* src = static_cast<const uint8_t*>(x->raw_data());
    uint8_t* dst = static_cast<uint8_t*>(y->mutable_raw_data());
    const int64_t pixels = out[0] * out[1];
    const auto max_of_rows = HWY_DYNAMIC_DISPATCH(MaxOfRowsImpl);
    ParallelFor(ctx, batch * pixels, channels * kernel_[0] * kernel_[1], [&](int64_t p0, int64_t p1) {
      std::vector<const uint8_t*> rows(static_cast<size_t>(kernel_[0] * kernel_[1]));
      for (int64_t p = p0; p < p1; ++p) {
        const int64_t n = p / pixels, oh = (p % pixels) / out[1], ow = p % out[1];
        const uint8_t* image = src + n * in[0] * in[1] * channels;
        int64_t count = 0;
        for (int64_t kh = 0; kh < kernel_[0]; ++kh) {
          const int64_t ih = oh * strides_[0] - begin[0] + kh * dilations_[0];
          if (ih < 0 || ih >= in[0]) continue;
          for (int64_t kw = 0; kw < kernel_[1]; ++kw) {
            const int64_t iw = ow * strides_[1] - begin[1] + kw * dilations_[1];
            if (iw >= 0 && iw < in[1]) rows[count++] = image + (ih * in[1] + iw) * channels;
          }
        }
        uint8_t* o = dst + p * channels;
        if (count == 0) {  // a window wholly in the padding: the type's least value
          std::memset(o, is_signed ? 0x80 : 0, channels);
        } else {
          max_of_rows(rows.data(), count, channels, is_signed, o);
        }
      }
    });
    return Status::Ok();
  }

 private:
  MaxPoolNhwcKernel() = default;
  std::vector<int64_t> kernel_, strides_, dilations_, pads_;
  std::string auto_pad_;
  bool ceil_ = false;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterMaxPoolNhwc(KernelRegistry& registry) {
  return registry.Register(kOnnxflowDomain, internal_ops::kMaxPoolNhwc, internal_ops::kVersion, internal_ops::kVersion,
                           Make<MaxPoolNhwcKernel>());
}

}  // namespace quant_ms
}  // namespace onnxflow

#endif  // HWY_ONCE
