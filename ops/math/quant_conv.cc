// com.onnxflow QLinearConvNhwc: QLinearConv on channels-last 8-bit tensors, X [N, D1..Dn, C] and
// Y [N, D1'..Dn', M], with QLinearConv's inputs, attributes and arithmetic (W stays [M, C/group,
// k1..kn]). graph/quant_layout.cc writes it for the convolutions of a quantized region.
//
// Why channels-last: a pixel's channels are one contiguous run of bytes, so the output pixels are
// the integer GEMM's rows (qgemm.h, QGemmRows) and the weights its columns, packed once at load.
// A 1x1 stride-1 convolution reads its rows in place (no packing at all); any other window
// gathers each pixel's taps (a tap is a memcpy of C/group bytes, the zero point where the window
// leaves the image). Per-channel scales and the bias are then vectors along the columns, which the
// GEMM's epilogue applies as it stores: y = saturate(round_half_even(acc * (x_scale * w_scale[m] /
// y_scale)) + y_zero).
//
// A depthwise convolution (2-D, one input and one output channel per group) would be one GEMM of a
// single column per group: it runs its own kernel instead (quant_depthwise.h), channels as lanes.
#include "ops/math/register.h"

#include <algorithm>
#include <cstring>

#include "ops/framework/copy_bytes.h"
#include "ops/framework/domains.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/shared_weights.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/qgemm.h"
#include "ops/math/quant_depthwise.h"

namespace onnxflow {
namespace {

bool IsQuant8(DataType t) { return t == DataType::kInt8 || t == DataType::kUint8; }

int32_t QuantAt(const Tensor* t, int64_t i) {
  if (t == nullptr) return 0;
  if (t->dtype() == DataType::kInt8) return t->data<int8_t>()[i];
  return t->data<uint8_t>()[i];
}

// W [M, C/group, taps...] per group as the GEMM's B: K = (tap, channel) in that order, the order a
// gathered NHWC row holds them; N = the group's output channels.
struct PackedNhwcWeight {
  std::vector<QPackedB> groups;
  DataType dtype = DataType::kUndefined;
  Shape shape;
  Tensor described;  // W's type and shape without data, checked in W's place at run
};

std::vector<QPackedB> PackNhwcWeight(const Tensor& w, int64_t group) {
  const int64_t m = w.dim(0), mg = m / group, cg = w.dim(1), taps = w.size() / std::max<int64_t>(m * cg, 1);
  const int64_t k = cg * taps;
  const uint8_t* wd = static_cast<const uint8_t*>(w.raw_data());
  std::vector<uint8_t> rows(static_cast<size_t>(mg * k));  // row j: output channel j's K bytes
  std::vector<QPackedB> out;
  for (int64_t g = 0; g < group; ++g) {
    for (int64_t j = 0; j < mg; ++j) {
      const uint8_t* src = wd + (g * mg + j) * k;  // [cg, taps]
      for (int64_t c = 0; c < cg; ++c) {
        for (int64_t t = 0; t < taps; ++t) rows[j * k + t * cg + c] = src[c * taps + t];
      }
    }
    out.push_back(QPackB(rows.data(), w.dtype() == DataType::kInt8, k, /*trans=*/true, k, mg));
  }
  return out;
}

std::shared_ptr<const PackedNhwcWeight> PackConstantWeight(const Tensor* w, int64_t group) {
  if (w == nullptr || !IsQuant8(w->dtype()) || w->rank() < 3 || w->size() == 0 || group <= 0 ||
      w->dim(0) % group != 0) {
    return nullptr;
  }
  return SharedWeights::Get<PackedNhwcWeight>(WeightKey("QuantConvNhwc.W").Add(*w).Add(group), [&] {
    PackedNhwcWeight p;
    p.groups = PackNhwcWeight(*w, group);
    p.dtype = w->dtype();
    p.shape = w->shape();
    p.described = Tensor(p.dtype, p.shape, /*storage=*/nullptr, /*data=*/nullptr);
    return p;
  });
}

// CopyShortBytes (ops/framework/copy_bytes.h) with every byte's top bit flipped (int8 activations
// stored as uint8 for the GEMM), eight bytes per XOR: a byte at a time made int8 convolutions 2-3x
// slower than uint8 ones (ResNet-50's 56x56 3x3 layers: 1.15 against 0.37 ms).
inline void CopyBytesFlipped(uint8_t* d, const uint8_t* s, int64_t n) {
  constexpr uint64_t kFlip = 0x8080808080808080ull;
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t v;
    std::memcpy(&v, s + i, 8);
    v ^= kFlip;
    std::memcpy(d + i, &v, 8);
  }
  for (; i < n; ++i) d[i] = s[i] ^ 0x80;
}
inline void FillBytes(uint8_t* d, uint8_t v, int64_t n) {
  for (int64_t i = 0; i < n; ++i) d[i] = v;
}

// One group's rows of A: output pixel i of the whole batch is row i.
class NhwcRows : public QRowSource {
 public:
  NhwcRows(const ConvGeometry& g, const uint8_t* x, int64_t group_index, bool flip, uint8_t pad)
      : g_(g), x_(x), end_(x + g.batch * g.in_size() * g.in_channels), flip_(flip), pad_(pad) {
    const int64_t nd = static_cast<int64_t>(g.kernel.size());
    cg_ = g.in_channels / g.group;
    c0_ = group_index * cg_;
    k_ = cg_ * g.kernel_size();
    in_place_ = !flip && IsPointwise(g) && cg_ % 4 == 0;
    // Each tap's offset per spatial axis, kernel position times dilation.
    taps_.resize(static_cast<size_t>(g.kernel_size() * nd));
    for (int64_t t = 0; t < g.kernel_size(); ++t) {
      int64_t rem = t;
      for (int64_t d = nd - 1; d >= 0; --d) {
        taps_[t * nd + d] = (rem % g.kernel[d]) * g.dilations[d];
        rem /= g.kernel[d];
      }
    }
    // A 2-D window of one group whose window rows are runs of adjacent pixels (unit column
    // dilation) of a whole number of 4-byte groups: its kernel rows are the segments, read in the
    // image. Asked on every tile, so answered once here.
    has_windows_ = !in_place_ && !flip_ && nd == 2 && cg_ == g.in_channels && g.dilations[1] == 1 &&
                   g.kernel[0] <= QWindows::kMaxSegments && (g.kernel[1] * cg_) % 4 == 0;
  }

  const uint8_t* Rows(int64_t i0, int64_t rows, uint8_t* scratch, int64_t* lda) const override {
    if (in_place_) {
      *lda = g_.in_channels;
      return x_ + i0 * g_.in_channels + c0_;
    }
    const int64_t kp = (k_ + 3) / 4 * 4;
    *lda = kp;
    const int64_t nd = static_cast<int64_t>(g_.kernel.size());
    if (nd == 2 && cg_ == g_.in_channels && g_.dilations[1] == 1) {
      Rows2D(i0, rows, scratch, kp);
      return scratch;
    }
    const int64_t out = g_.out_size(), in = g_.in_size(), taps = g_.kernel_size();
    int64_t opos[8], base[8];
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = i0 + r;
      int64_t rem = i % out;
      for (int64_t d = nd - 1; d >= 0; --d) {
        opos[d] = rem % g_.out_spatial[d];
        rem /= g_.out_spatial[d];
        base[d] = opos[d] * g_.strides[d] - g_.pads_begin[d];
      }
      const uint8_t* image = x_ + (i / out) * in * g_.in_channels + c0_;
      uint8_t* dst = scratch + r * kp;
      for (int64_t t = 0; t < taps; ++t) {
        int64_t pixel = 0;
        bool inside = true;
        for (int64_t d = 0; d < nd; ++d) {
          const int64_t c = base[d] + taps_[t * nd + d];
          inside = inside && c >= 0 && c < g_.in_spatial[d];
          pixel = pixel * g_.in_spatial[d] + c;
        }
        uint8_t* o = dst + t * cg_;
        if (!inside) {
          FillBytes(o, pad_, cg_);
        } else {
          CopyPixels(o, image + pixel * g_.in_channels, cg_);
        }
      }
      ZeroTail(dst);
    }
    return scratch;
  }

  int64_t k() const { return k_; }

  bool HasWindows() const override { return has_windows_; }

  int64_t Windows(int64_t i0, int64_t rows, QWindows* w) const override {
    if (!has_windows_) return 0;
    const int64_t oh_n = g_.out_spatial[0], ow_n = g_.out_spatial[1], h_n = g_.in_spatial[0], w_n = g_.in_spatial[1];
    const int64_t kh_n = g_.kernel[0], kw_n = g_.kernel[1], c = g_.in_channels;
    const int64_t n = i0 / (oh_n * ow_n), oh = (i0 / ow_n) % oh_n, ow = i0 % ow_n;
    const int64_t ih0 = oh * g_.strides[0] - g_.pads_begin[0];
    if (ih0 < 0 || ih0 + (kh_n - 1) * g_.dilations[0] >= h_n) return 0;
    // Output columns whose window row lies inside the image: iw0 >= 0 and iw0 + kw - 1 < W.
    const int64_t sw = g_.strides[1], pw = g_.pads_begin[1];
    const int64_t first = (pw + sw - 1) / sw;                        // the least ow with iw0 >= 0
    const int64_t last = (w_n - kw_n + pw) >= 0 ? (w_n - kw_n + pw) / sw : -1;  // the greatest ow inside
    if (ow < first || ow > last) return 0;
    const int64_t served = std::min({rows, last - ow + 1, ow_n - ow});
    w->segments = kh_n;
    w->seg_k = kw_n * c;
    w->stride = sw * c;
    const uint8_t* image = x_ + n * h_n * w_n * c;
    for (int64_t s = 0; s < kh_n; ++s) w->base[s] = image + ((ih0 + s * g_.dilations[0]) * w_n + ow * sw - pw) * c;
    return served;
  }

 private:
  // n bytes of the image as the GEMM stores them.
  void CopyPixels(uint8_t* d, const uint8_t* s, int64_t n) const {
    if (flip_) {
      CopyBytesFlipped(d, s, n);
    } else {
      CopyShortBytes(d, s, n);
    }
  }

  // Zeros a row's bytes from k to the next multiple of 4 as one 4-byte store (the scratch has
  // room past its last row, qgemm.h): a tail of 1 to 3 bytes per row as a memset call cost more.
  void ZeroTail(uint8_t* row) const {
    if (k_ % 4 == 0) return;
    const uint32_t zero = 0;
    std::memcpy(row + k_, &zero, 4);
  }

  // One group, 2-D, unit column dilation: a window row's taps inside the image are adjacent
  // pixels, whose channels are one run of bytes (the stem's 7 taps of 3 channels: one copy of 21
  // bytes instead of 7 of 3).
  void Rows2D(int64_t i0, int64_t rows, uint8_t* scratch, int64_t kp) const {
    const int64_t oh_n = g_.out_spatial[0], ow_n = g_.out_spatial[1], h_n = g_.in_spatial[0], w_n = g_.in_spatial[1];
    const int64_t kh_n = g_.kernel[0], kw_n = g_.kernel[1], c = g_.in_channels, span = kw_n * c;
    // The pixel's coordinates step along with the row (three 64-bit divisions per row were a
    // fair part of the gather).
    int64_t n = i0 / (oh_n * ow_n), oh = (i0 / ow_n) % oh_n, ow = i0 % ow_n - 1;
    for (int64_t r = 0; r < rows; ++r) {
      if (++ow == ow_n) {
        ow = 0;
        if (++oh == oh_n) {
          oh = 0;
          ++n;
        }
      }
      const int64_t ih0 = oh * g_.strides[0] - g_.pads_begin[0], iw0 = ow * g_.strides[1] - g_.pads_begin[1];
      const int64_t lo = std::clamp<int64_t>(-iw0, 0, kw_n), hi = std::clamp<int64_t>(w_n - iw0, lo, kw_n);
      const uint8_t* image = x_ + n * h_n * w_n * c;
      uint8_t* dst = scratch + r * kp;
      for (int64_t kh = 0; kh < kh_n; ++kh, dst += span) {
        const int64_t ih = ih0 + kh * g_.dilations[0];
        if (ih < 0 || ih >= h_n) {
          FillBytes(dst, pad_, span);
          continue;
        }
        // A narrow window row inside the image (an RGB stem's 3 pixels of 3 channels) as one
        // fixed 32-byte piece: what runs past the span is written over by the next segment or
        // row, or lands in the scratch's slack (qgemm.h kRowSlack). Copied in pieces of 8 and 1,
        // YOLOv8n's 640 x 640 stem gathered its rows in 1.4 of its 1.9 ms.
        const uint8_t* from = image + (ih * w_n + iw0) * c;
        if (!flip_ && span <= kRowSlack && lo == 0 && hi == kw_n && from + kRowSlack <= end_) {
          std::memcpy(dst, from, kRowSlack);
          continue;
        }
        if (lo > 0) FillBytes(dst, pad_, lo * c);
        uint8_t* run = dst + lo * c;
        CopyPixels(run, image + (ih * w_n + iw0 + lo) * c, (hi - lo) * c);
        if (hi < kw_n) FillBytes(dst + hi * c, pad_, (kw_n - hi) * c);
      }
      ZeroTail(scratch + r * kp);
    }
  }


  const ConvGeometry& g_;
  const uint8_t* x_;
  const uint8_t* end_;  // one past the image's last byte
  bool flip_;  // int8 input: stored flipped to uint8
  uint8_t pad_;
  int64_t cg_ = 0, c0_ = 0, k_ = 0;
  bool in_place_ = false;
  bool has_windows_ = false;  // HasWindows()
  std::vector<int64_t> taps_;
};

// A depthwise W with its zero points folded in (quant_depthwise.h), when both are constant.
struct PackedDepthwise {
  QDepthwiseWeights weights;
  Tensor described;  // W's type and shape without data, checked in W's place at run
};

std::shared_ptr<const PackedDepthwise> PackConstantDepthwise(const Tensor* w, const Tensor* w_zero) {
  if (w == nullptr || w_zero == nullptr || !IsQuant8(w->dtype()) || w_zero->dtype() != w->dtype() ||
      (w_zero->size() != 1 && w_zero->size() != w->dim(0))) {
    return nullptr;
  }
  return SharedWeights::Get<PackedDepthwise>(WeightKey("QuantDepthwiseNhwc.W").Add(*w).Add(*w_zero), [&] {
    PackedDepthwise p;
    p.weights = PackQDepthwise(*w, w_zero);
    p.described = Tensor(w->dtype(), w->shape(), /*storage=*/nullptr, /*data=*/nullptr);
    return p;
  });
}

class QLinearConvNhwcKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(ConvAttributes attrs, ParseConvAttributes(info));
    if (attrs.kernel_shape.size() > 6) return InvalidArgument("QLinearConvNhwc: at most 6 spatial axes");
    const Tensor* w = info.constant_input(3);
    // A depthwise W never meets the GEMM: packed for the depthwise kernel when its zero points
    // are constant too, else read at run.
    if (w != nullptr && IsQDepthwiseWeight(w->shape(), attrs.group)) {
      auto depthwise = PackConstantDepthwise(w, info.constant_input(5));
      return std::unique_ptr<OpKernel>(new QLinearConvNhwcKernel(std::move(attrs), nullptr, std::move(depthwise)));
    }
    auto packed = PackConstantWeight(w, attrs.group);
    return std::unique_ptr<OpKernel>(new QLinearConvNhwcKernel(std::move(attrs), std::move(packed), nullptr));
  }
  bool ReadsAtRun(int input) const override { return input != 3 || (packed_ == nullptr && depthwise_ == nullptr); }

  Status Compute(KernelContext& ctx) const override {
    const Tensor* in[8];
    for (int i = 0; i < 8; ++i) {
      if (i == 3 && (packed_ != nullptr || depthwise_ != nullptr)) {
        in[i] = packed_ != nullptr ? &packed_->described : &depthwise_->described;
        continue;
      }
      ONNXFLOW_ASSIGN_OR_RETURN(in[i], ctx.RequireTensor(i));
    }
    const Tensor &x = *in[0], &xs = *in[1], &w = *in[3], &ws = *in[4], &ys = *in[6], &yz = *in[7];
    const Tensor *xz = in[2], *wz = in[5];
    if (!IsQuant8(x.dtype()) || !IsQuant8(w.dtype()) || !IsQuant8(yz.dtype())) {
      return InvalidArgument("x, w and y_zero_point must be int8 or uint8");
    }
    if (xz->dtype() != x.dtype() || wz->dtype() != w.dtype()) {
      return InvalidArgument("zero points must have the type of their operand");
    }
    if (x.rank() < 3 || x.rank() > 8) return InvalidArgument("X must have rank 3 to 8, got " + ShapeToString(x.shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs_, ChannelsFirst(x.shape()), w.shape()));
    const int64_t m = g.out_channels, mg = m / g.group;
    if (xs.dtype() != DataType::kFloat || ws.dtype() != DataType::kFloat || ys.dtype() != DataType::kFloat) {
      return InvalidArgument("scales must be float");
    }
    if (xs.size() != 1 || ys.size() != 1 || yz.size() != 1 || xz->size() != 1) {
      return InvalidArgument("x_scale, x_zero_point, y_scale and y_zero_point must be scalars");
    }
    if ((ws.size() != 1 && ws.size() != m) || (wz->size() != 1 && wz->size() != m)) {
      return InvalidArgument("w_scale and w_zero_point must have 1 or " + std::to_string(m) + " values");
    }
    const Tensor* bias = ctx.input_tensor(8);
    if (bias != nullptr && (bias->dtype() != DataType::kInt32 || bias->size() != m)) {
      return InvalidArgument("B must be int32 with one value per output channel");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, yz.dtype(), ChannelsLast(g.output_shape())));
    if (y->size() == 0) return Status::Ok();

    // The multiplier per output channel, x_scale * w_scale[m] / y_scale: the float operations of
    // the reference (QGemmReference) in its order, so out_scale goes in as 1.
    std::vector<float> multiplier(m);
    const float x_scale = xs.data<float>()[0];
    for (int64_t j = 0; j < m; ++j) multiplier[j] = x_scale * ws.data<float>()[ws.size() == 1 ? 0 : j] / ys.data<float>()[0];
    if (IsQDepthwise(g)) return RunDepthwise(g, x, xz, w, wz, bias, yz, multiplier, y, ctx.threads());
    std::vector<int32_t> w_zero(wz->size());
    for (int64_t j = 0; j < wz->size(); ++j) w_zero[j] = QuantAt(wz, j);

    std::vector<QPackedB> local;
    const std::vector<QPackedB>* weights = packed_ != nullptr ? &packed_->groups : nullptr;
    if (weights == nullptr) {
      local = PackNhwcWeight(w, g.group);
      weights = &local;
    }
    const bool x_signed = x.dtype() == DataType::kInt8;
    const int32_t x_zero = QuantAt(xz, 0);
    const uint8_t pad = static_cast<uint8_t>(x_zero) ^ (x_signed ? 0x80 : 0);
    const uint8_t* xd = static_cast<const uint8_t*>(x.raw_data());
    uint8_t* yd = static_cast<uint8_t*>(y->mutable_raw_data());
    for (int64_t gi = 0; gi < g.group; ++gi) {
      const NhwcRows rows(g, xd, gi, x_signed, pad);
      QRowsA a;
      a.m = g.batch * g.out_size();
      a.k = rows.k();
      a.offset = x_signed ? 128 : 0;
      a.zero = x_zero;
      a.source = &rows;
      QEpilogue ep;
      ep.kind = yz.dtype() == DataType::kInt8 ? QOutput::kInt8 : QOutput::kUint8;
      ep.bias_col = bias != nullptr ? bias->data<int32_t>() + gi * mg : nullptr;
      ep.scale_col = multiplier.data() + gi * mg;
      ep.out_scale = 1.0f;
      ep.out_zero = QuantAt(&yz, 0);
      const bool per_channel = w_zero.size() > 1;
      QGemmRows(a, (*weights)[gi], w_zero.data() + (per_channel ? gi * mg : 0), per_channel ? mg : 1, ep, yd + gi * mg,
                m, ctx.threads());
    }
    return Status::Ok();
  }

 private:
  QLinearConvNhwcKernel(ConvAttributes attrs, std::shared_ptr<const PackedNhwcWeight> packed,
                        std::shared_ptr<const PackedDepthwise> depthwise)
      : attrs_(std::move(attrs)), packed_(std::move(packed)), depthwise_(std::move(depthwise)) {}

  Status RunDepthwise(const ConvGeometry& g, const Tensor& x, const Tensor* xz, const Tensor& w, const Tensor* wz,
                      const Tensor* bias, const Tensor& yz, const std::vector<float>& multiplier, Tensor* y,
                      int threads) const {
    QDepthwiseWeights local;
    if (depthwise_ == nullptr) local = PackQDepthwise(w, wz);
    QDepthwiseArgs args;
    args.x = static_cast<const uint8_t*>(x.raw_data());
    args.x_signed = x.dtype() == DataType::kInt8;
    args.x_zero = QuantAt(xz, 0);
    args.bias = bias != nullptr ? bias->data<int32_t>() : nullptr;
    args.multiplier = multiplier.data();
    args.y_signed = yz.dtype() == DataType::kInt8;
    args.y_zero = QuantAt(&yz, 0);
    args.y = static_cast<uint8_t*>(y->mutable_raw_data());
    QDepthwiseConv(g, depthwise_ != nullptr ? depthwise_->weights : local, args, threads);
    return Status::Ok();
  }

  ConvAttributes attrs_;
  std::shared_ptr<const PackedNhwcWeight> packed_;
  std::shared_ptr<const PackedDepthwise> depthwise_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterQuantConvKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxflowDomain, internal_ops::kQLinearConvNhwc, internal_ops::kVersion,
                                             internal_ops::kVersion, Make<QLinearConvNhwcKernel>()));
  // com.microsoft QLinearConv, what ONNX Runtime saves at its default level ("all") for a
  // quantized CNN: with channels_last = 1 it is this op exactly (X and Y channels-last, W as
  // QLinearConv's); without, QLinearConv-10 (registered by quantized.cc, before this file).
  const KernelDef* plain = registry.Find(kOnnxDomain, "QLinearConv", 10);
  if (plain == nullptr) return Internal("com.microsoft QLinearConv needs QLinearConv-10 registered first");
  KernelFactory channels_first = plain->factory;
  return registry.Register(kMsDomain, "QLinearConv", 1, kOpenEnded,
                           [channels_first](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
                             if (info.GetInt("channels_last", 0) != 0) return QLinearConvNhwcKernel::Create(info);
                             return channels_first(info);
                           });
}

}  // namespace onnxflow
