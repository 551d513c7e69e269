// ConvTranspose (all versions): output_shape, output_padding, groups, dilations, auto_pad.
//
// Per image and group, col [M/g * k, in] = W_g^T [M/g * k, C/g] x X_g [C/g, in] on the GEMM (W_g^T
// packed once at load when W is constant), then col is scattered into Y (Col2ImAdd) and the bias
// added. float16/bfloat16 compute in float; double on the plain loop.
#include "ops/math/register.h"

#include "ops/framework/dispatch.h"
#include "ops/framework/parallel.h"
#include "ops/framework/shape.h"
#include "ops/framework/window_geometry.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/conv_transpose_geometry.h"
#include "ops/math/float_view.h"
#include "ops/math/gemm.h"

namespace onnxflow {
namespace {

// Col2ImAdd for a 1-D or 2-D transposed convolution (1-D as a plane of height 1), a channel per
// task: each kernel tap's row of col adds into the output plane run by run, the run's bounds worked
// out once per grid row instead of index arithmetic per element. Each plane starts from its bias.
// A U-Net's 4x4 stride-2 upsampling, 64 -> 32 channels to 256x256, one core: 207 -> 11 ms with
// the col buffer pooled (ONNX Runtime: 14-51 ms); a vocoder's 1-D 16-tap stride 8: 4.0 -> 2.7 ms.
void ScatterPlanes(const TransposeGeometry& g, int64_t channels, const float* col, const float* bias, float* y,
                   int threads) {
  const bool one_d = g.kernel.size() == 1;
  const int64_t kh_n = one_d ? 1 : g.kernel[0], kw_n = g.kernel.back();
  const int64_t gh_n = one_d ? 1 : g.in_spatial[0], gw_n = g.in_spatial.back();
  const int64_t oh_n = one_d ? 1 : g.out_spatial[0], ow_n = g.out_spatial.back();
  const int64_t sh = one_d ? 1 : g.strides[0], sw = g.strides.back();
  const int64_t dh = one_d ? 1 : g.dilations[0], dw = g.dilations.back();
  const int64_t ph = one_d ? 0 : g.pads_begin[0], pw = g.pads_begin.back();
  const int64_t positions = gh_n * gw_n, plane = oh_n * ow_n;
  ParallelFor(threads, channels, kh_n * kw_n * positions + plane, [&](int64_t c0, int64_t c1) {
    for (int64_t c = c0; c < c1; ++c) {
      float* img = y + c * plane;
      std::fill(img, img + plane, bias != nullptr ? bias[c] : 0.0f);
      for (int64_t kh = 0; kh < kh_n; ++kh) {
        for (int64_t kw = 0; kw < kw_n; ++kw) {
          const float* src = col + ((c * kh_n + kh) * kw_n + kw) * positions;
          // Grid columns whose output column gw * sw - pw + kw * dw lies in [0, ow_n).
          const int64_t shift = kw * dw - pw;
          const int64_t lo = std::max<int64_t>(0, FloorDiv(-shift + sw - 1, sw));
          const int64_t hi = std::min<int64_t>(gw_n - 1, FloorDiv(ow_n - 1 - shift, sw));
          if (lo > hi) continue;
          for (int64_t gh = 0; gh < gh_n; ++gh) {
            const int64_t oh = gh * sh - ph + kh * dh;
            if (oh < 0 || oh >= oh_n) continue;
            const float* s = src + gh * gw_n + lo;
            float* d = img + oh * ow_n + lo * sw + shift;
            const int64_t n = hi - lo + 1;
            if (sw == 1) {
              for (int64_t j = 0; j < n; ++j) d[j] += s[j];
            } else {
              for (int64_t j = 0; j < n; ++j) d[j * sw] += s[j];
            }
          }
        }
      }
    }
  });
}

class ConvTransposeKernel : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    ONNXFLOW_ASSIGN_OR_RETURN(TransposeAttributes attrs, ParseTransposeAttributes(info));
    return std::unique_ptr<OpKernel>(new ConvTransposeKernel(info, std::move(attrs)));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* w, ctx.RequireTensor(1));
    const Tensor* b = ctx.input_tensor(2);
    if (x->dtype() != w->dtype() || (b != nullptr && b->dtype() != x->dtype())) {
      return InvalidArgument("ConvTranspose: X, W and B must have the same type");
    }
    ONNXFLOW_ASSIGN_OR_RETURN(TransposeGeometry g, ComputeTransposeGeometry(attrs_, x->shape(), w->shape()));
    if (b != nullptr && b->size() != g.out_channels) {
      return InvalidArgument("ConvTranspose: B has " + std::to_string(b->size()) + " values for " +
                             std::to_string(g.out_channels) + " output channels");
    }
    Shape out_shape = {g.batch, g.out_channels};
    out_shape.insert(out_shape.end(), g.out_spatial.begin(), g.out_spatial.end());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), out_shape));
    if (y->size() == 0) return Status::Ok();
    // Pads can cut the output down to a pixel while col keeps every tap of every input position.
    ONNXFLOW_RETURN_IF_ERROR(CheckCol(ctx, g, x->dtype() == DataType::kDouble ? sizeof(double) : sizeof(float)));
    if (x->dtype() == DataType::kDouble) {
      Run<double>(g, x->data<double>(), w->data<double>(), b != nullptr ? b->data<double>() : nullptr,
                  y->mutable_data<double>(), 1);
      return Status::Ok();
    }
    if (!IsFloatLike(x->dtype())) {
      return Unimplemented(std::string("ConvTranspose: type ") + DataTypeName(x->dtype()) + " is not supported");
    }
    FloatScratch xs, ws, bs, ys;
    const float* xd = FloatData(*x, xs);
    const float* wd = FloatData(*w, ws);  // cheap for float32 (no copy); unused when packed
    const float* bd = b != nullptr ? FloatData(*b, bs) : nullptr;
    float* yd = FloatOutput(y, ys);
    const bool use_packed = !packed_w_.empty() && w->dtype() == packed_w_dtype_ && w->shape() == packed_w_shape_;
    Run<float>(g, xd, wd, bd, yd, ctx.threads(), use_packed ? &packed_w_ : nullptr);
    StoreFloats(yd, y->size(), y);
    return Status::Ok();
  }

 private:
  ConvTransposeKernel(const KernelInfo& info, TransposeAttributes attrs) : attrs_(std::move(attrs)) {
    // A constant W is packed once, per group as the transposed A operand [M/g * k, C/g].
    const Tensor* w = info.constant_input(1);
    if (w != nullptr && IsFloatLike(w->dtype()) && w->rank() >= 3 && w->size() > 0 && w->dim(0) % attrs_.conv.group == 0) {
      FloatScratch widened;
      const float* wd = FloatData(*w, widened);
      const int64_t cg = w->dim(0) / attrs_.conv.group, rows = w->size() / w->dim(0);
      for (int64_t grp = 0; grp < attrs_.conv.group; ++grp) {
        packed_w_.push_back(PackA(wd + grp * cg * rows, rows, /*trans=*/true, rows, cg));
      }
      packed_w_dtype_ = w->dtype();
      packed_w_shape_ = w->shape();
    }
  }

  // Run's col, [M/g, k1..kn, D1..Dn] for one image and group, checked against the run's one-tensor
  // limit. As dims: with no input channels, W and X hold no values whatever their other dims say.
  static Status CheckCol(const KernelContext& ctx, const TransposeGeometry& g, size_t element) {
    Shape shape = {g.out_channels / g.group};
    shape.insert(shape.end(), g.kernel.begin(), g.kernel.end());
    shape.insert(shape.end(), g.in_spatial.begin(), g.in_spatial.end());
    return ctx.CheckScratch(shape, element, "ConvTranspose: the unfolded product (col)");
  }

  template <typename T>
  static void Run(const TransposeGeometry& g, const T* x, const T* w, const T* bias, T* y, int threads,
                  const std::vector<PackedA>* packed = nullptr) {
    const int64_t cg = g.in_channels / g.group, mg = g.out_channels / g.group;
    const int64_t ksize = g.kernel_size(), in = g.in_size(), out = g.out_size();
    const int64_t rows = mg * ksize;
    // From the tensor pool: a U-Net layer's col is tens of MB, which a std::vector zeroes and
    // faults in at every run.
    Tensor col_store = Tensor::Uninitialized(DataTypeOf<T>::value, {rows * in});
    T* col = col_store.mutable_data<T>();
    for (int64_t n = 0; n < g.batch; ++n) {
      for (int64_t grp = 0; grp < g.group; ++grp) {
        const T* xg = x + (n * g.in_channels + grp * cg) * in;
        const T* wg = w + grp * cg * rows;  // [C/g, M/g * k]
        if constexpr (std::is_same_v<T, float>) {
          GemmInputA ia{packed != nullptr ? &(*packed)[grp] : nullptr, wg, rows, true, 1.0f};
          GemmInputB ib{nullptr, xg, in, false};
          Sgemm(rows, in, cg, ia, ib, col, in, GemmEpilogue{}, threads);
        } else {
          NaiveMatMul<T>(rows, in, cg, wg, rows, true, xg, in, false, col, in);
        }
        T* yg = y + (n * g.out_channels + grp * mg) * out;
        if constexpr (std::is_same_v<T, float>) {
          if (g.kernel.size() <= 2) {
            ScatterPlanes(g, mg, col, bias != nullptr ? bias + grp * mg : nullptr, yg, threads);
            continue;
          }
        }
        Col2ImAdd<T>(g.out_spatial, g.in_spatial, g.kernel, g.strides, g.dilations, g.pads_begin, mg, col, yg);
        if (bias != nullptr) {
          for (int64_t m = 0; m < mg; ++m) {
            const T bv = bias[grp * mg + m];
            for (int64_t p = 0; p < out; ++p) yg[m * out + p] += bv;
          }
        }
      }
    }
  }

  TransposeAttributes attrs_;
  std::vector<PackedA> packed_w_;
  DataType packed_w_dtype_ = DataType::kUndefined;
  Shape packed_w_shape_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterConvTransposeKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "ConvTranspose", 1, kOpenEnded, Make<ConvTransposeKernel>());
}

}  // namespace onnxflow
