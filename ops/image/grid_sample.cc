// GridSample (opsets 16, 20, 22): samples X (N, C, D1..Dr) at the normalized positions of grid
// (N, D1_out..Dr_out, r) with nearest, (multi)linear or (multi)cubic interpolation and zeros /
// border / reflection padding. Opset 16 is 2-D only and spells the modes bilinear / bicubic.
//
// Each output position's taps (flat input offsets and weights) are worked out once and reused
// for every channel; output positions are split over cores. Coordinates follow the ONNX
// reference (and PyTorch's grid_sampler): denormalize, round (nearest, half to even), pull
// out-of-range coordinates back in for border/reflection, then fetch each tap with the padding
// rule. com.microsoft GridSample, PyTorch's export before opset 16, is GridSample-16.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/domains.h"
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

enum class SampleMode { kNearest, kLinear, kCubic };
enum class Padding { kZeros, kBorder, kReflection };

// Reflects x into [lo, hi] by bouncing off both borders as often as needed.
template <typename C>
C Reflect(C x, C lo, C hi) {
  const C range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo) {
    const C m = std::fmod(lo - x, 2 * range);
    return m < range ? lo + m : hi - (m - range);
  }
  if (x > hi) {
    const C m = std::fmod(x - hi, 2 * range);
    return m < range ? hi - m : lo + (m - range);
  }
  return x;
}

// The Keys cubic kernel with a = -0.75 (PyTorch's bicubic) at the 4 taps around fraction t.
template <typename C>
void CubicWeights(C t, C* w) {
  const C a = C(-0.75);
  auto near = [&](C d) { return ((a + 2) * d - (a + 3)) * d * d + 1; };
  auto far = [&](C d) { return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a; };
  w[0] = far(t + 1);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

// Element types that can be picked (nearest) but not weighted.
template <typename T>
constexpr bool kPickOnly = std::is_same_v<T, bool> || std::is_same_v<T, std::string> ||
                           std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>;

// Integers take the interpolated value truncated (and saturated), as the reference's cast does.
template <typename T, typename C>
T ToOutput(C acc) {
  if constexpr (std::is_integral_v<T>) {
    const double v = std::trunc(static_cast<double>(acc));
    if (!(v >= static_cast<double>(std::numeric_limits<T>::lowest()))) return std::numeric_limits<T>::lowest();
    if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(v);
  } else {
    return FromCompute<T>(static_cast<ComputeType<T>>(acc));
  }
}

class GridSampleKernel final : public OpKernel {
 public:
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info) {
    auto k = std::make_unique<GridSampleKernel>();
    k->opset_ = info.opset();
    const std::string mode = info.GetString("mode", info.opset() < 20 ? "bilinear" : "linear");
    if (mode == "nearest") {
      k->mode_ = SampleMode::kNearest;
    } else if (mode == "linear" || mode == "bilinear") {
      k->mode_ = SampleMode::kLinear;
    } else if (mode == "cubic" || mode == "bicubic") {
      k->mode_ = SampleMode::kCubic;
    } else {
      return InvalidArgument("unknown GridSample mode '" + mode + "'");
    }
    const std::string padding = info.GetString("padding_mode", "zeros");
    if (padding == "zeros") {
      k->padding_ = Padding::kZeros;
    } else if (padding == "border") {
      k->padding_ = Padding::kBorder;
    } else if (padding == "reflection") {
      k->padding_ = Padding::kReflection;
    } else {
      return InvalidArgument("unknown GridSample padding_mode '" + padding + "'");
    }
    k->align_corners_ = info.GetInt("align_corners", 0) != 0;
    return std::unique_ptr<OpKernel>(std::move(k));
  }

  Status Compute(KernelContext& ctx) const override {
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
    ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* grid, ctx.RequireTensor(1));
    const int64_t rank = x->rank();
    if (rank < 3) return InvalidArgument("X must have rank >= 3 (N, C, spatial...), got " + ShapeToString(x->shape()));
    if (opset_ < 20 && rank != 4) return InvalidArgument("GridSample-16 takes 4-D X, got " + ShapeToString(x->shape()));
    const int64_t r = rank - 2;
    if (grid->rank() != rank || grid->dim(0) != x->dim(0) || grid->dim(rank - 1) != r) {
      return InvalidArgument("grid shape " + ShapeToString(grid->shape()) + " does not fit X shape " +
                             ShapeToString(x->shape()) + " (expected (N, D1_out.., " + std::to_string(r) + "))");
    }
    Shape out_shape = {x->dim(0), x->dim(1)};
    for (int64_t i = 1; i + 1 < rank; ++i) out_shape.push_back(grid->dim(i));
    if (r > 6) return Unimplemented("GridSample supports up to 6 spatial axes, got " + std::to_string(r));
    ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.Allocate(0, x->dtype(), out_shape));
    if (y->size() == 0) return Status::Ok();
    for (int64_t i = 2; i < rank; ++i) {
      if (x->dim(i) == 0) return InvalidArgument("X has an empty spatial axis: " + ShapeToString(x->shape()));
    }
    if (IsOneOf<ONNXFLOW_NUMERIC_TYPES>(x->dtype())) {
      return DispatchType<ONNXFLOW_NUMERIC_TYPES>(x->dtype(), [&](auto tag) {
        using T = decltype(tag);
        using C = std::conditional_t<std::is_same_v<T, double> || std::is_integral_v<T>, double, float>;
        return DispatchType<float, double, Float16, BFloat16>(grid->dtype(), [&](auto gtag) {
          using G = decltype(gtag);
          Run<T, C, G>(ctx, *x, *grid, y);
          return Status::Ok();
        });
      });
    }
    // Values that cannot be weighted (bool, string, complex) can still be picked: nearest only.
    if (mode_ != SampleMode::kNearest) {
      return Unimplemented(std::string("GridSample of ") + DataTypeName(x->dtype()) + " supports mode nearest only");
    }
    return DispatchType<bool, std::string, std::complex<float>, std::complex<double>>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      return DispatchType<float, double, Float16, BFloat16>(grid->dtype(), [&](auto gtag) {
        using G = decltype(gtag);
        Run<T, float, G>(ctx, *x, *grid, y);
        return Status::Ok();
      });
    });
  }

 private:
  // One spatial axis' taps for one output position: input index and weight of each.
  template <typename C>
  struct AxisTaps {
    int n = 0;
    int64_t index[4];
    C weight[4];
  };

  // Index i of an axis of length len under the padding rule; false when it reads a zero.
  template <typename C>
  bool PadIndex(int64_t i, int64_t len, C lo, C hi, int64_t* out) const {
    if (i >= 0 && i < len) {
      *out = i;
      return true;
    }
    switch (padding_) {
      case Padding::kZeros:
        return false;
      case Padding::kBorder:
        *out = std::clamp<int64_t>(i, 0, len - 1);
        return true;
      case Padding::kReflection:
        *out = std::clamp<int64_t>(static_cast<int64_t>(Reflect<C>(static_cast<C>(i), lo, hi)), 0, len - 1);
        return true;
    }
    return false;
  }

  template <typename C>
  void AxisFor(C g, int64_t len, AxisTaps<C>* t) const {
    const C lo = align_corners_ ? C(0) : C(-0.5);
    const C hi = align_corners_ ? static_cast<C>(len - 1) : static_cast<C>(len) - C(0.5);
    C x = align_corners_ ? (g + 1) / 2 * static_cast<C>(len - 1) : ((g + 1) * static_cast<C>(len) - 1) / 2;
    // NaN and huge coordinates land far outside: zeros reads 0, the others pull them in.
    if (!(x > C(-1e9))) x = C(-1e9);
    if (x > C(1e9)) x = C(1e9);
    if (mode_ == SampleMode::kNearest) x = std::nearbyint(x);  // half to even, as PyTorch
    if (x < lo || x > hi) {
      if (padding_ == Padding::kBorder) x = std::clamp(x, C(0), static_cast<C>(len - 1));
      if (padding_ == Padding::kReflection) x = Reflect(x, lo, hi);
    }
    t->n = 0;
    auto add = [&](int64_t i, C w) {
      int64_t idx;
      if (PadIndex<C>(i, len, lo, hi, &idx)) {
        t->index[t->n] = idx;
        t->weight[t->n] = w;
        ++t->n;
      }
    };
    if (mode_ == SampleMode::kNearest) {
      add(static_cast<int64_t>(x), C(1));
      return;
    }
    const C x0 = std::floor(x);
    const C f = x - x0;
    const int64_t i0 = static_cast<int64_t>(x0);
    if (mode_ == SampleMode::kLinear) {
      add(i0, 1 - f);
      add(i0 + 1, f);
      return;
    }
    C w[4];
    CubicWeights(f, w);
    for (int k = 0; k < 4; ++k) add(i0 - 1 + k, w[k]);
  }

  template <typename T, typename C, typename G>
  void Run(const KernelContext& ctx, const Tensor& x, const Tensor& grid, Tensor* y) const {
    const int64_t rank = x.rank();
    const int64_t r = rank - 2;
    const int64_t batch = x.dim(0), channels = x.dim(1);
    const int64_t in_points = SizeFromDim(x.shape(), 2);
    const int64_t out_points = SizeFromDim(y->shape(), 2);
    const std::vector<int64_t> in_strides = Strides(Shape(x.shape().begin() + 2, x.shape().end()));
    const T* src = x.data<T>();
    const G* g = grid.data<G>();
    T* dst = y->mutable_data<T>();
    const int64_t taps_per_axis = mode_ == SampleMode::kNearest ? 1 : mode_ == SampleMode::kLinear ? 2 : 4;
    int64_t max_taps = 1;
    for (int64_t i = 0; i < r; ++i) max_taps *= taps_per_axis;

    ParallelFor(ctx, batch * out_points, channels * max_taps * 2, [&](int64_t begin, int64_t end) {
      std::vector<AxisTaps<C>> axes(static_cast<size_t>(r));
      std::vector<int64_t> offsets(static_cast<size_t>(max_taps));
      std::vector<C> weights(static_cast<size_t>(max_taps));
      for (int64_t item = begin; item < end; ++item) {
        const int64_t n = item / out_points;
        const int64_t p = item % out_points;
        const G* loc = g + item * r;
        // The grid lists coordinates innermost axis first.
        for (int64_t i = 0; i < r; ++i) {
          AxisFor<C>(static_cast<C>(ToCompute(loc[r - 1 - i])), x.dim(2 + i), &axes[i]);
        }
        // Cartesian product of the per-axis taps.
        int64_t count = 1;
        offsets[0] = 0;
        weights[0] = 1;
        for (int64_t i = 0; i < r && count > 0; ++i) {
          const AxisTaps<C>& a = axes[i];
          int64_t next = 0;
          for (int64_t j = count - 1; j >= 0; --j) {  // expand in place, back to front
            for (int k = a.n - 1; k >= 0; --k) {
              const int64_t slot = j * a.n + k;
              offsets[slot] = offsets[j] + a.index[k] * in_strides[i];
              weights[slot] = weights[j] * a.weight[k];
            }
          }
          next = count * a.n;
          count = next;
        }
        if constexpr (kPickOnly<T>) {
          // Nearest only: one tap (weight 1) or none (zeros padding reads the zero value).
          for (int64_t c = 0; c < channels; ++c) {
            dst[(n * channels + c) * out_points + p] = count > 0 ? src[(n * channels + c) * in_points + offsets[0]] : T{};
          }
        } else {
          for (int64_t c = 0; c < channels; ++c) {
            const T* plane = src + (n * channels + c) * in_points;
            C acc = 0;
            for (int64_t k = 0; k < count; ++k) acc += weights[k] * static_cast<C>(ToCompute(plane[offsets[k]]));
            dst[(n * channels + c) * out_points + p] = ToOutput<T>(acc);
          }
        }
      }
    });
  }

  int opset_ = 22;
  SampleMode mode_ = SampleMode::kLinear;
  Padding padding_ = Padding::kZeros;
  bool align_corners_ = false;
};

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterGridSample(KernelRegistry& registry) {
  // com.microsoft GridSample (version 1) is what PyTorch exported grid_sample as before ONNX had it
  // (opset 16): the same attributes and modes as GridSample-16, 4-D only, which the kernel applies
  // to every opset below 20 (the com.microsoft version is 1).
  ONNXFLOW_RETURN_IF_ERROR(registry.Register(kMsDomain, "GridSample", 1, kOpenEnded, Make<GridSampleKernel>()));
  return registry.Register(kOnnxDomain, "GridSample", 16, kOpenEnded,
                           Make<GridSampleKernel>());
}

}  // namespace image
}  // namespace onnxflow
