// Col2Im (18): rearranges column blocks [N, C * prod(block), L] back into images [N, C, image...],
// summing overlaps (the adjoint of im2col), with dilations, pads and strides.
#include "ops/framework/dispatch.h"
#include "ops/framework/window_geometry.h"
#include "ops/math/conv_geometry.h"
#include "ops/math/float_view.h"
#include "ops/math/register.h"

namespace onnxflow {
namespace {

class Col2ImKernel : public OpKernel {
 public:
  explicit Col2ImKernel(const KernelInfo& info)
      : dilations_(info.GetInts("dilations")), pads_(info.GetInts("pads")), strides_(info.GetInts("strides")) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* image_t, ctx.RequireTensor(1));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* block_t, ctx.RequireTensor(2));
    if (image_t->dtype() != DataType::kInt64 || block_t->dtype() != DataType::kInt64 ||
        image_t->size() != block_t->size() || image_t->size() == 0) {
      return InvalidArgument("Col2Im: image_shape and block_shape must be int64 vectors of one length");
    }
    const int64_t nd = image_t->size();
    std::vector<int64_t> image(image_t->data<int64_t>(), image_t->data<int64_t>() + nd);
    std::vector<int64_t> block(block_t->data<int64_t>(), block_t->data<int64_t>() + nd);
    std::vector<int64_t> dil = dilations_.empty() ? std::vector<int64_t>(nd, 1) : dilations_;
    std::vector<int64_t> str = strides_.empty() ? std::vector<int64_t>(nd, 1) : strides_;
    std::vector<int64_t> pads = pads_.empty() ? std::vector<int64_t>(2 * nd, 0) : pads_;
    if (static_cast<int64_t>(dil.size()) != nd || static_cast<int64_t>(str.size()) != nd ||
        static_cast<int64_t>(pads.size()) != 2 * nd) {
      return InvalidArgument("Col2Im: dilations, strides and pads must match image_shape");
    }
    if (x->rank() != 3) return InvalidArgument("Col2Im: input must be [N, C*prod(block), L]");
    int64_t block_size = 1, positions = 1;
    std::vector<int64_t> grid(nd), pads_begin(pads.begin(), pads.begin() + nd);
    // block_shape and image_shape are run-time inputs, the attributes may be hostile: every product
    // and sum below is checked, since any of them can pass INT64_MAX before the shapes are compared.
    for (int64_t d = 0; d < nd; ++d) {
      if (block[d] < 1 || image[d] < 0 || dil[d] < 1 || str[d] < 1 || pads[d] < 0 || pads[d + nd] < 0) {
        return InvalidArgument("Col2Im: block_shape, dilations and strides must be positive, image_shape and pads "
                               "not negative (axis " + std::to_string(d) + ")");
      }
      int64_t span = 0, padded = 0;
      if (__builtin_mul_overflow(block_size, block[d], &block_size) || !CheckedDilatedWindow(block[d], dil[d], &span) ||
          __builtin_add_overflow(image[d], pads[d], &padded) || __builtin_add_overflow(padded, pads[d + nd], &padded)) {
        return InvalidArgument("Col2Im: block_shape " + ShapeToString(block) + ", dilations and pads make axis " +
                               std::to_string(d) + " longer than any tensor");
      }
      grid[d] = padded >= span ? (padded - span) / str[d] + 1 : 0;
      if (__builtin_mul_overflow(positions, grid[d], &positions)) {
        return InvalidArgument("Col2Im: image_shape " + ShapeToString(image) + " holds more blocks than any tensor");
      }
    }
    if (x->dim(1) % block_size != 0 || x->dim(2) != positions) {
      return InvalidArgument("Col2Im: input " + ShapeToString(x->shape()) + " does not match " +
                             std::to_string(positions) + " blocks of " + std::to_string(block_size));
    }
    const int64_t channels = x->dim(1) / block_size;
    Shape out = {x->dim(0), channels};
    out.insert(out.end(), image.begin(), image.end());
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), out));
    const int64_t in_per = x->dim(1) * positions, out_per = channels * ElementCount(image);
    if (IsFloatLike(x->dtype())) {
      FloatScratch xs, ys;
      const float* xd = FloatData(*x, xs);
      float* yd = FloatOutput(y, ys);
      for (int64_t n = 0; n < x->dim(0); ++n) {
        Col2ImAdd<float>(image, grid, block, str, dil, pads_begin, channels, xd + n * in_per, yd + n * out_per);
      }
      StoreFloats(yd, y->size(), y);
      return Status::Ok();
    }
    return DispatchType<double, ONNXFLOW_INT_TYPES>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      for (int64_t n = 0; n < x->dim(0); ++n) {
        Col2ImAdd<T>(image, grid, block, str, dil, pads_begin, channels, x->data<T>() + n * in_per,
                     y->mutable_data<T>() + n * out_per);
      }
      return Status::Ok();
    });
  }

 private:
  std::vector<int64_t> dilations_, pads_, strides_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterCol2ImKernels(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "Col2Im", 18, kOpenEnded, Make<Col2ImKernel>());
}

}  // namespace onnxflow
