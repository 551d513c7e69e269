// AffineGrid (opset 20): the sampling grid of torch.nn.functional.affine_grid. For each output
// position the base coordinates (x along W, y along H, z along D, each spread over [-1, 1]) go
// through the batch's affine matrix: grid[n, .., :] = theta[n] @ [x, y, (z,) 1].
#include <string>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/image/register.h"

namespace onnxflow {
namespace image {
namespace {

// The i-th of `len` evenly spread base coordinates. A single position sits at the centre, 0, as
// in PyTorch.
double BaseCoordinate(int64_t i, int64_t len, bool align_corners) {
  if (len <= 1) return 0.0;
  const double di = static_cast<double>(i), dl = static_cast<double>(len);
  return align_corners ? -1.0 + 2.0 * di / (dl - 1) : -1.0 + (2.0 * di + 1.0) / dl;
}

class AffineGridKernel final : public OpKernel {
 public:
  explicit AffineGridKernel(const KernelInfo& info) : align_corners_(info.GetInt("align_corners", 0) != 0) {}

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* theta, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* size, ctx.RequireTensor(1));
    if (size->dtype() != DataType::kInt64 || size->rank() != 1 || (size->size() != 4 && size->size() != 5)) {
      return InvalidArgument("size must be int64 [N, C, H, W] or [N, C, D, H, W], got " + ShapeToString(size->shape()));
    }
    const int64_t* sz = size->data<int64_t>();
    const int64_t spatial = size->size() - 2;  // 2 or 3
    for (int64_t i = 0; i < size->size(); ++i) {
      if (sz[i] < 0) return InvalidArgument("size has a negative value " + std::to_string(sz[i]));
    }
    const Shape want = {sz[0], spatial, spatial + 1};
    if (theta->shape() != want) {
      return InvalidArgument("theta shape " + ShapeToString(theta->shape()) + " does not match size (expected " +
                             ShapeToString(want) + ")");
    }
    Shape out_shape = {sz[0]};
    for (int64_t i = 2; i < size->size(); ++i) out_shape.push_back(sz[i]);
    out_shape.push_back(spatial);
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * grid, ctx.Allocate(0, theta->dtype(), out_shape));
    if (grid->size() == 0) return Status::Ok();
    // Spatial lengths, outermost first: (H, W) or (D, H, W).
    std::vector<int64_t> lens(sz + 2, sz + size->size());
    const int64_t points = grid->size() / (sz[0] * spatial);
    return DispatchType<float, double, Float16, BFloat16>(theta->dtype(), [&](auto tag) {
      using T = decltype(tag);
      const T* th = theta->data<T>();
      T* out = grid->mutable_data<T>();
      ParallelFor(ctx, sz[0] * points, spatial * (spatial + 1) * 2, [&](int64_t begin, int64_t end) {
        double base[4];
        for (int64_t item = begin; item < end; ++item) {
          const int64_t n = item / points;
          int64_t rest = item % points;
          // base = [x (W), y (H), z (D), 1]: innermost axis first.
          for (int64_t a = 0; a < spatial; ++a) {
            const int64_t len = lens[spatial - 1 - a];
            base[a] = BaseCoordinate(rest % len, len, align_corners_);
            rest /= len;
          }
          base[spatial] = 1.0;
          const T* m = th + n * spatial * (spatial + 1);
          T* o = out + item * spatial;
          for (int64_t row = 0; row < spatial; ++row) {
            double acc = 0;
            for (int64_t k = 0; k <= spatial; ++k) {
              acc += static_cast<double>(ToCompute(m[row * (spatial + 1) + k])) * base[k];
            }
            o[row] = FromCompute<T>(static_cast<ComputeType<T>>(acc));
          }
        }
      });
      return Status::Ok();
    });
  }

 private:
  bool align_corners_;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterAffineGrid(KernelRegistry& registry) {
  return registry.Register(kOnnxDomain, "AffineGrid", 20, kOpenEnded, Make<AffineGridKernel>());
}

}  // namespace image
}  // namespace onnxflow
