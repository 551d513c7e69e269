// Conv (1-D/2-D/3-D and beyond, groups, dilations, strides, pads, auto_pad; all versions) and
// com.onnxflow FusedConv (the same plus an activation in the GEMM epilogue).
//
// Per image and group, Y_g [M/g, out] = W_g [M/g, C/g * k] x col_g [C/g * k, out]: the weights are
// the packed A operand (packed once at load when constant), the image the B operand, pixels in the
// vector lanes. A pointwise conv (1x1, stride 1, no pads) reads X in place as B (a strided one, its
// subsampled pixels); a stride-1 2-D conv reads a padded copy in place, row by row
// (ShiftedImageSource); other convs unfold X block by block into packed B strips (Im2ColSource). The
// bias and the activation run in the GEMM epilogue. Strided 3x3-like convs, and stride-1 ones on
// small maps, instead put the output channels in the lanes: C [out, M] = gathered image x W^T,
// transposed into Y (PixelGather; which convs: PixelGathering below).
// float16/bfloat16 compute in float (as does float X with 16-bit W); double uses the direct loop.
#include <memory>
#include <optional>

#include "ops/framework/dispatch.h"
#include "ops/framework/internal_ops.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shared_weights.h"
#include "ops/framework/shape.h"
#include "ops/math/conv_depthwise.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/conv_sources.h"
#include "ops/math/float_view.h"
#include "ops/math/fused_activation.h"
#include "ops/math/gemm.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

// A strided 1x1 convolution without pads (ResNet's projections) is pointwise on every s-th pixel:
// gathering those once makes a B matrix a quarter of the image, read in place like X itself.
bool IsStridedPointwise2D(const ConvGeometry& g) {
  return g.kernel.size() == 2 && g.kernel[0] == 1 && g.kernel[1] == 1 && g.pads_begin[0] == 0 &&
         g.pads_begin[1] == 0 && g.pads_end[0] == 0 && g.pads_end[1] == 0;
}

Tensor SubsamplePixels(const ConvGeometry& g, const float* image, int64_t channels) {
  const int64_t oh_n = g.out_spatial[0], ow_n = g.out_spatial[1], iw_n = g.in_spatial[1];
  const int64_t sh = g.strides[0], sw = g.strides[1];
  Tensor sub = Tensor::Uninitialized(DataType::kFloat, {channels * oh_n * ow_n});
  float* dst = sub.mutable_data<float>();
  for (int64_t c = 0; c < channels; ++c) {
    const float* plane = image + c * g.in_size();
    for (int64_t oh = 0; oh < oh_n; ++oh) {
      const float* row = plane + oh * sh * iw_n;
      for (int64_t ow = 0; ow < ow_n; ++ow) *dst++ = row[ow * sw];
    }
  }
  return sub;
}

class ConvKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, ActivationSpec activation) {
    ONNXFLOW_ASSIGN_OR_RETURN(ConvAttributes attrs, ParseConvAttributes(info));
    return std::unique_ptr<OpKernel>(new ConvKernel(info, attrs, activation));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
    const Tensor* b = ctx.input_tensor(2);
    // Or X, B float and W 16-bit: a half model's convolution after graph/half_compute.cc moved its
    // arithmetic to float and left the weights in 16 bits (packed widened here, at load).
    const bool half_weights = x->dtype() == DataType::kFloat && IsFloatLike(w->dtype());
    if ((x->dtype() != w->dtype() && !half_weights) || (b != nullptr && b->dtype() != x->dtype())) {
      return InvalidArgument("Conv: X, W and B must have the same type");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(ConvGeometry g, ComputeConvGeometry(attrs_, x->shape(), w->shape()));
    if (b != nullptr && b->size() != g.out_channels) {
      return InvalidArgument("Conv: B has " + std::to_string(b->size()) + " values for " +
                             std::to_string(g.out_channels) + " output channels");
    }
    const Tensor* z = ctx.input_tensor(3);  // FusedConv's residual: an Add the graph pass folded in
    if (z != nullptr) return ComputeWithResidual(ctx, *x, *w, b, *z, g);
    // The GEMM paths write every element; the direct loop for double accumulates into zeros.
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, x->dtype() == DataType::kDouble
                                              ? ctx.Allocate(0, x->dtype(), g.output_shape())
                                              : ctx.AllocateUninitialized(0, x->dtype(), g.output_shape()));
    if (y->size() == 0) return Status::Ok();
    if (x->dtype() == DataType::kDouble) {
      DirectConv<double, double, double>(g, x->data<double>(), w->data<double>(),
                                         b != nullptr ? b->data<double>() : nullptr, 0.0, nullptr,
                                         y->mutable_data<double>());
      if (activation_.kind != Activation::kNone) {
        double* yd = y->mutable_data<double>();
        for (int64_t i = 0; i < y->size(); ++i) yd[i] = ActivationScalar(activation_, static_cast<float>(yd[i]));
      }
      return Status::Ok();
    }
    if (!IsFloatLike(x->dtype())) {
      return Unimplemented(std::string("Conv: type ") + DataTypeName(x->dtype()) + " is not supported");
    }
    return ComputeFloat(ctx, *x, *w, b, nullptr, activation_, g, y);
  }

 private:
  ConvKernel(const KernelInfo& info, ConvAttributes attrs, ActivationSpec activation)
      : attrs_(std::move(attrs)), activation_(activation) {
    const Tensor* w = info.constant_input(1);
    // A depthwise convolution (one input channel per group) runs on its own kernel and reads W as it
    // is: packed, each channel's few taps would be padded to a whole GEMM strip.
    const bool depthwise = w != nullptr && (w->rank() == 3 || w->rank() == 4) && attrs_.group > 1 && w->dim(1) == 1;
    if (w != nullptr && !depthwise && IsFloatLike(w->dtype()) && w->rank() >= 3 && w->size() > 0 &&
        w->dim(0) % attrs_.group == 0) {
      FloatScratch widened;
      const float* wd = FloatData(*w, widened);
      const int64_t mg = w->dim(0) / attrs_.group;
      const int64_t k = w->size() / w->dim(0);
      const PixelGathering gathering = GathersPixels(*w);
      // Both shared by content with every Conv (of any session) packing the same weights.
      if (gathering != PixelGathering::kNever) {
        packed_wt_ = SharedWeights::Get<PackedB>(WeightKey("Conv.Wt").Add(*w),
                                                 [&] { return PackB(wd, k, /*trans=*/true, k, w->dim(0)); });
      }
      if (gathering != PixelGathering::kAlways) {
        packed_w_ = SharedWeights::Get<std::vector<PackedA>>(WeightKey("Conv.W").Add(*w).Add(attrs_.group), [&] {
          std::vector<PackedA> per_group;
          for (int64_t grp = 0; grp < attrs_.group; ++grp) per_group.push_back(PackA(wd + grp * mg * k, k, false, mg, k));
          return per_group;
        });
      }
      packed_w_dtype_ = w->dtype();
      packed_w_shape_ = w->shape();
    }
  }

  // Whether a convolution runs with the output channels in the vector lanes, gathering the image
  // in place (PixelGather), instead of the image-in-lanes GEMM. Decided at load from W and the
  // attributes, because it decides how the weights are packed.
  enum class PixelGathering {
    kNever,
    // Strided 2-D convolutions that are not 1x1 (downsampling 3x3): unfolding them for the
    // image-in-lanes GEMM costs a strided pass per tap (3x3 stride 2, 256 channels on 28x28: 2.03 ->
    // 1.69 ms on one core, 1.29 -> 1.05 on two). Not used where it lost in light_resnet50: stems
    // (few channels, a big output: the transpose into Y costs more than the unfolding saved, 7x7
    // stem 2.4 -> 3.2 ms) and 512 or more output channels (its 7x7 stage, 2.2 -> 2.5 ms: the
    // gathered broadcasts span too many channel planes per K block to stay in L1).
    kAlways,
    // Stride-1 3x3 convolutions with 288 to 576 (channel, tap) columns, on maps of at most
    // kSmallMapPixels, known only when X arrives. There the image-in-lanes GEMM wastes its wrapped
    // grid columns and a mostly empty last strip (13x13: 195 grid columns = 4 x 48 + 3): 64 -> 256
    // channels on 13x13 0.39 -> 0.34 ms, 48 -> 192 0.24 -> 0.21 ms; even from 14x14 to 20x20, worse
    // on 27x27 and up. Both packings are kept: at most 576 x 511 floats more per convolution.
    kOnSmallMaps,
  };
  static constexpr int64_t kSmallMapPixels = 400;

  PixelGathering GathersPixels(const Tensor& w) const {
    // 1-D (audio): with the signal in the lanes, a window is unfolded element by element
    // (Im2ColSource), and a short signal (a streaming model's STFT over one chunk: 4 or 5 frames)
    // fills few lanes. With the channels in the lanes the window is read where it lies. One
    // core: STFT 257 bins x 512 taps stride 160 over 5 frames 0.036 -> 0.010 ms, over 1024 frames
    // 3.6 -> 1.7 ms; 64 -> 64 channels k3 over 1024 1.02 -> 0.19 ms; 512 -> 512 k3 stride 2 over 800
    // 12.2 -> 7.6 ms. Not for windows of under 16 (channel, tap) columns: a waveform stem (1 channel,
    // 10 taps, 512 outputs) went 0.46 -> 0.89 ms.
    // 3-D (video, volumes): the same, the generic Im2ColSource being the other path; 16 -> 32
    // channels 3x3x3 on 16x56x56, one core: 291 -> 10.6 ms (ONNX Runtime 13-44 in the same minutes).
    if (w.rank() == 3 || w.rank() == 5) {
      const int64_t k = w.size() / w.dim(0);
      return attrs_.group != 1 || k == w.dim(1) || k < 16 ? PixelGathering::kNever : PixelGathering::kAlways;
    }
    if (w.rank() != 4 || attrs_.group != 1 || (w.dim(2) == 1 && w.dim(3) == 1) || w.dim(0) >= 512) {
      return PixelGathering::kNever;
    }
    const int64_t k = w.dim(1) * w.dim(2) * w.dim(3);
    if (k < 288) return PixelGathering::kNever;
    for (int64_t s : attrs_.strides) {
      if (s > 1) return PixelGathering::kAlways;
    }
    return k <= 576 ? PixelGathering::kOnSmallMaps : PixelGathering::kNever;
  }

  // Y = act(conv(X) + Z). Z of Y's shape is added in the GEMM epilogue; a Z that broadcasts (Add's
  // numpy rule) is added after the convolution, in the broadcast shape.
  Status ComputeWithResidual(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* b, const Tensor& z,
                             const ConvGeometry& g) const {
    if (x.dtype() != DataType::kFloat || z.dtype() != DataType::kFloat) {
      return InvalidArgument("FusedConv: the residual input needs float X and Z");
    }
    if (z.shape() == g.output_shape()) {
      ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, g.output_shape()));
      if (y->size() == 0) return Status::Ok();
      return ComputeFloat(ctx, x, w, b, z.data<float>(), activation_, g, y);
    }
    Tensor conv = Tensor::Uninitialized(DataType::kFloat, g.output_shape());
    if (conv.size() > 0) ONNXFLOW_RETURN_IF_ERROR(ComputeFloat(ctx, x, w, b, nullptr, ActivationSpec{}, g, &conv));
    ONNXFLOW_ASSIGN_OR_RETURN(Shape shape, BroadcastShapes(conv.shape(), z.shape()));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, DataType::kFloat, shape));
    const std::vector<int64_t> conv_strides = BroadcastStrides(conv.shape(), shape);
    const std::vector<int64_t> z_strides = BroadcastStrides(z.shape(), shape);
    float* yd = y->mutable_data<float>();
    std::vector<int64_t> index(shape.size(), 0);
    for (int64_t i = 0; i < y->size(); ++i) {
      int64_t oc = 0, oz = 0;
      for (size_t d = 0; d < shape.size(); ++d) {
        oc += index[d] * conv_strides[d];
        oz += index[d] * z_strides[d];
      }
      yd[i] = ActivationScalar(activation_, conv.data<float>()[oc] + z.data<float>()[oz]);
      for (size_t d = shape.size(); d-- > 0;) {
        if (++index[d] < shape[d]) break;
        index[d] = 0;
      }
    }
    return Status::Ok();
  }

  // `addend` (Y's shape, float only) is added before the activation; it may be null.
  Status ComputeFloat(KernelContext& ctx, const Tensor& x, const Tensor& w, const Tensor* b, const float* addend,
                      const ActivationSpec& activation, const ConvGeometry& g, Tensor* y) const {
    FloatScratch x_store, w_store, b_store, y_store;
    const float* xd = FloatData(x, x_store);
    const bool packed_shape = w.dtype() == packed_w_dtype_ && w.shape() == packed_w_shape_;
    const bool use_packed = packed_w_ != nullptr && packed_shape;
    const bool gather = packed_wt_ != nullptr && packed_shape && PixelGather::Applies(g) &&
                        (packed_w_ == nullptr || g.out_size() <= kSmallMapPixels);
    const float* wd = use_packed ? nullptr : FloatData(w, w_store);
    const float* bd = b != nullptr ? FloatData(*b, b_store) : nullptr;
    float* yd = FloatOutput(y, y_store);

    if (IsDepthwise(g)) {
      FloatScratch wd_store;
      DepthwiseConv(g, xd, FloatData(w, wd_store), bd, addend, activation, yd, ctx.threads());
      StoreFloats(yd, y->size(), y);
      return Status::Ok();
    }
    const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
    const int64_t k = cg * g.kernel_size(), out = g.out_size(), in = g.in_size();
    const bool pointwise = IsPointwise(g);
    const int threads = ctx.threads();
    const int64_t units = g.batch * g.group;
    // Many small groups (depthwise and friends): one (image, group) per core at a time. Otherwise
    // each GEMM and its im2col split over the cores.
    const bool split_units = units > 1 && mg * k * out < (1 << 21);
    const int inner_threads = split_units ? 1 : threads;
    // Groups on the shifted image share one padded copy per image, made before they split over the
    // cores, and each core's units one grid buffer: per group, the copy, its row offsets and the
    // grid took pool buffers, 3 per group of RegNet's 56 on 7 x 7, and the two cores queued for them
    // (a grouped layer ran slower on two cores than on one).
    const bool shifted = !gather && !pointwise && !IsStridedPointwise2D(g) && ShiftedImageSource::Applies(g);
    std::vector<std::unique_ptr<const ShiftedImageSource>> whole_images;
    if (shifted && g.group > 1) {
      for (int64_t n = 0; n < g.batch; ++n) {
        whole_images.push_back(
            std::make_unique<const ShiftedImageSource>(g, xd + n * g.in_channels * in, g.in_channels, threads));
      }
    }

    auto run_unit = [&](int64_t unit, Tensor& grid_scratch) {
      const int64_t n = unit / g.group, grp = unit % g.group;
      const float* image = xd + (n * g.in_channels + grp * cg) * in;
      float* yg = yd + (n * g.out_channels + grp * mg) * out;
      GemmInputA ia;
      if (use_packed) {
        ia.packed = &(*packed_w_)[grp];
      } else {
        ia.data = wd + grp * mg * k;
        ia.ld = k;
      }
      const float* unit_addend = addend != nullptr ? addend + (n * g.out_channels + grp * mg) * out : nullptr;
      GemmEpilogue epilogue;
      epilogue.row_bias = bd != nullptr ? bd + grp * mg : nullptr;
      epilogue.addend = unit_addend;
      epilogue.activation = activation;
      // The paths that reshape C into Y afterwards (transposing it, or dropping grid columns) add a
      // residual while reshaping, and the activation must follow it there; without a residual the
      // activation stays in the tile epilogue.
      const ActivationSpec in_tiles = unit_addend == nullptr ? activation : ActivationSpec{};
      const ActivationSpec after_reshape = unit_addend == nullptr ? ActivationSpec{} : activation;
      GemmInputB ib;
      if (gather) {  // output channels in the lanes: C [pixels x M], transposed into Y as it is done
        const PixelGather pixels(g, image, cg, inner_threads);
        AlignedFloats c = AlignedFloats::Make(out * mg, /*zero=*/false);
        ib.packed = packed_wt_.get();
        GemmEpilogue tile_epilogue;
        tile_epilogue.col_bias = epilogue.row_bias;
        tile_epilogue.activation = in_tiles;
        tile_epilogue.block_done = [&](int64_t p0, int64_t ps, int64_t m0, int64_t ms) {
          pixels.TransposeBlock(c.get(), mg, p0, ps, m0, ms, yg, unit_addend, after_reshape);
        };
        Sgemm(out, mg, k, pixels.AsA(), ib, c.get(), mg, tile_epilogue, inner_threads);
      } else if (pointwise) {  // X itself is the B operand
        ib.data = image;
        ib.ld = in;
        Sgemm(mg, out, k, ia, ib, yg, out, epilogue, inner_threads);
      } else if (IsStridedPointwise2D(g)) {
        const Tensor sub = SubsamplePixels(g, image, cg);
        ib.data = sub.data<float>();
        ib.ld = out;
        Sgemm(mg, out, k, ia, ib, yg, out, epilogue, inner_threads);
      } else if (shifted) {
        std::optional<const ShiftedImageSource> own;
        if (whole_images.empty()) own.emplace(g, image, cg, inner_threads);
        const ShiftedImageSource& source = own ? *own : *whole_images[n];
        const RowsOf group_rows(source, grp * k);
        ib.source = &group_rows;
        const int64_t grid = source.grid_columns();
        if (source.grid_is_output()) {
          Sgemm(mg, out, k, ia, ib, yg, out, epilogue, inner_threads);
        } else {
          // The grid is wider than Y: the residual is added as it is compacted.
          if (grid_scratch.size() < mg * grid) grid_scratch = Tensor::Uninitialized(DataType::kFloat, {mg * grid});
          epilogue.addend = nullptr;
          epilogue.activation = in_tiles;
          const float* wide_data = grid_scratch.data<float>();
          epilogue.block_done = [&](int64_t row0, int64_t rows, int64_t col0, int64_t cols) {
            source.CompactBlock(wide_data, row0, rows, col0, cols, yg, unit_addend, after_reshape);
          };
          Sgemm(mg, grid, k, ia, ib, grid_scratch.mutable_data<float>(), grid, epilogue, inner_threads);
        }
      } else {
        const Im2ColSource source(g, image, cg);
        ib.source = &source;
        Sgemm(mg, out, k, ia, ib, yg, out, epilogue, inner_threads);
      }
    };

    if (split_units) {
      ParallelFor(threads, units, MacCost(mg * k * out), [&](int64_t u0, int64_t u1) {
        Tensor grid_scratch;
        for (int64_t u = u0; u < u1; ++u) run_unit(u, grid_scratch);
      });
    } else {
      Tensor grid_scratch;
      for (int64_t u = 0; u < units; ++u) run_unit(u, grid_scratch);
    }
    StoreFloats(yd, y->size(), y);
    return Status::Ok();
  }

  ConvAttributes attrs_;
  ActivationSpec activation_;
  std::shared_ptr<const std::vector<PackedA>> packed_w_;  // one per group
  std::shared_ptr<const PackedB> packed_wt_;              // or W^T [K x M], for GathersPixels (group 1 only)
  DataType packed_w_dtype_ = DataType::kUndefined;
  Shape packed_w_shape_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterConvKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kOnnxDomain, "Conv", 1, kOpenEnded, Make<ConvKernel>(ActivationSpec{})));
  return registry.Register(kOnnxflowDomain, internal_ops::kFusedConv, internal_ops::kVersion, kOpenEnded,
                           [](const KernelInfo& info) -> Result<std::unique_ptr<OpKernel>> {
                             ONNXFLOW_ASSIGN_OR_RETURN(ActivationSpec act, ParseFusedActivation(info));
                             return ConvKernel::Create(info, act);
                           });
}

}  // namespace onnxflow
