// Resize (opsets 10, 11, 13, 18, 19) and the deprecated Upsample (7, 9).
//
// A call works out the output shape and one sampling table per resized axis (resize_tables.h),
// then:
//   - nearest: one gather pass over output rows, any element type (strings and bools too);
//   - linear on a float image (2-D, or NCHW resized in H and W): one pass in ONNX Runtime's
//     bilinear arithmetic, for the same bits (resize_bilinear.h);
//   - other linear / cubic: separable passes, one per resized axis, in a float (double for double and
//     integer inputs) working buffer. A pass along an outer axis makes each output row a weighted
//     sum of a few contiguous input rows (Highway, resize_rows.h); the pass along the last axis is
//     a small gather-dot per output element. Output rows are split over cores with ParallelFor.
// Axes whose size, scale and roi leave them unchanged are skipped, as the reference does.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ops/framework/dispatch.h"
#include "ops/framework/kernel.h"
#include "ops/framework/kernel_info.h"
#include "ops/framework/numeric.h"
#include "ops/framework/parallel.h"
#include "ops/framework/registry.h"
#include "ops/framework/shape.h"
#include "ops/image/register.h"
#include "ops/image/resize_bilinear.h"
#include "ops/image/resize_rows.h"
#include "ops/image/resize_tables.h"

namespace onnxflow {
namespace image {
namespace {

enum class AspectPolicy { kStretch, kNotLarger, kNotSmaller };

struct ResizeConfig {
  AxisSampling sampling;
  double extrapolation_value = 0.0;
  AspectPolicy policy = AspectPolicy::kStretch;
  bool has_axes = false;
  std::vector<int64_t> axes;
  // Where the optional inputs sit for this op version (-1: not an input of this version).
  int roi_input = -1;
  int scales_input = -1;
  int sizes_input = -1;
  bool scales_from_attribute = false;  // Upsample-7
  std::vector<float> scales_attribute;
};

// Everything one call needs, worked out from the inputs.
struct ResizePlan {
  Shape in_shape;
  Shape out_shape;
  std::vector<int64_t> resized;  // axes that change, ascending
  std::vector<AxisTable> tables;  // one per resized axis
  // Each axis's factor as ONNX Runtime holds it (float: the scales input, or float(out) /
  // float(in) from sizes); empty when a keep_aspect_ratio_policy chose it (resize_bilinear.h).
  std::vector<float> float_scale;
  bool from_sizes = false;  // the output lengths were given, not worked out from scales
};

Result<std::vector<double>> ReadFloats(const Tensor& t, const char* name) {
  std::vector<double> v(static_cast<size_t>(t.size()));
  Status s = DispatchType<float, double, Float16, BFloat16>(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(ToCompute(p[i]));
    return Status::Ok();
  });
  if (!s.ok()) return InvalidArgument(std::string(name) + ": " + s.message());
  return v;
}

Result<std::vector<int64_t>> ReadInts(const Tensor& t, const char* name) {
  std::vector<int64_t> v(static_cast<size_t>(t.size()));
  Status s = DispatchType<int64_t, int32_t>(t.dtype(), [&](auto tag) {
    using T = decltype(tag);
    const T* p = t.data<T>();
    for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<int64_t>(p[i]);
    return Status::Ok();
  });
  if (!s.ok()) return InvalidArgument(std::string(name) + ": " + s.message());
  return v;
}

std::string JoinInts(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
  return s + "]";
}

bool Near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max(1.0, std::abs(b)); }

class ResizeKernel final : public OpKernel {
 public:
  explicit ResizeKernel(ResizeConfig config) : c_(std::move(config)) {}

  static Result<std::unique_ptr<OpKernel>> CreateResize(const KernelInfo& info);
  static Result<std::unique_ptr<OpKernel>> CreateUpsample(const KernelInfo& info);

  Status Compute(KernelContext& ctx) const override;

 private:
  Result<ResizePlan> MakePlan(const KernelContext& ctx, const Tensor& x) const;

  ResizeConfig c_;
};

Result<std::unique_ptr<OpKernel>> ResizeKernel::CreateResize(const KernelInfo& info) {
  ResizeConfig c;
  const int opset = info.opset();
  ONNXFLOW_ASSIGN_OR_RETURN(c.sampling.mode, ParseResizeMode(info.GetString("mode", "nearest")));
  if (opset < 11) {
    if (c.sampling.mode == ResizeMode::kCubic) return InvalidArgument("Resize-10 supports nearest and linear only");
    c.sampling.coordinate = CoordinateMode::kAsymmetric;
    c.sampling.nearest = NearestMode::kSimple;
    c.scales_input = 1;
  } else {
    ONNXFLOW_ASSIGN_OR_RETURN(c.sampling.coordinate,
                              ParseCoordinateMode(info.GetString("coordinate_transformation_mode", "half_pixel")));
    ONNXFLOW_ASSIGN_OR_RETURN(c.sampling.nearest,
                              ParseNearestMode(info.GetString("nearest_mode", "round_prefer_floor")));
    c.sampling.cubic_a = info.GetFloat("cubic_coeff_a", -0.75f);
    c.sampling.exclude_outside = info.GetInt("exclude_outside", 0) != 0;
    c.extrapolation_value = info.GetFloat("extrapolation_value", 0.0f);
    c.roi_input = 1;
    c.scales_input = 2;
    c.sizes_input = 3;
  }
  if (opset >= 18) {
    c.sampling.antialias = info.GetInt("antialias", 0) != 0;
    if (info.has_attribute("axes")) {
      c.has_axes = true;
      c.axes = info.GetInts("axes");
    }
    const std::string policy = info.GetString("keep_aspect_ratio_policy", "stretch");
    if (policy == "stretch") {
      c.policy = AspectPolicy::kStretch;
    } else if (policy == "not_larger") {
      c.policy = AspectPolicy::kNotLarger;
    } else if (policy == "not_smaller") {
      c.policy = AspectPolicy::kNotSmaller;
    } else {
      return InvalidArgument("unknown keep_aspect_ratio_policy '" + policy + "'");
    }
  }
  // Antialiasing is a filter widening for linear and cubic; nearest has no filter to widen.
  if (c.sampling.mode == ResizeMode::kNearest) c.sampling.antialias = false;
  return std::unique_ptr<OpKernel>(new ResizeKernel(std::move(c)));
}

Result<std::unique_ptr<OpKernel>> ResizeKernel::CreateUpsample(const KernelInfo& info) {
  ResizeConfig c;
  ONNXFLOW_ASSIGN_OR_RETURN(c.sampling.mode, ParseResizeMode(info.GetString("mode", "nearest")));
  if (c.sampling.mode == ResizeMode::kCubic) return InvalidArgument("Upsample supports nearest and linear only");
  c.sampling.coordinate = CoordinateMode::kAsymmetric;
  c.sampling.nearest = NearestMode::kSimple;
  if (info.opset() < 9) {
    if (!info.has_attribute("scales")) return InvalidArgument("Upsample-7 needs the 'scales' attribute");
    c.scales_from_attribute = true;
    c.scales_attribute = info.GetFloats("scales");
  } else {
    c.scales_input = 1;
  }
  return std::unique_ptr<OpKernel>(new ResizeKernel(std::move(c)));
}

Result<ResizePlan> ResizeKernel::MakePlan(const KernelContext& ctx, const Tensor& x) const {
  ResizePlan p;
  p.in_shape = x.shape();
  const int64_t rank = x.rank();

  std::vector<int64_t> axes;
  if (c_.has_axes) {
    std::vector<bool> seen(static_cast<size_t>(rank), false);
    for (int64_t a : c_.axes) {
      ONNXFLOW_ASSIGN_OR_RETURN(int64_t axis, NormalizeAxis(a, rank));
      if (seen[axis]) return InvalidArgument("axes " + JoinInts(c_.axes) + " repeats axis " + std::to_string(a));
      seen[axis] = true;
      axes.push_back(axis);
    }
  } else {
    for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
  }
  const size_t naxes = axes.size();

  std::vector<double> scales_in;
  bool have_scales = false;
  if (c_.scales_from_attribute) {
    scales_in.assign(c_.scales_attribute.begin(), c_.scales_attribute.end());
    have_scales = true;
  } else if (const Tensor* s = ctx.input_tensor(c_.scales_input); s != nullptr && s->size() > 0) {
    ONNXFLOW_ASSIGN_OR_RETURN(scales_in, ReadFloats(*s, "scales"));
    have_scales = true;
  }
  std::vector<int64_t> sizes_in;
  bool have_sizes = false;
  if (c_.sizes_input >= 0) {
    if (const Tensor* s = ctx.input_tensor(c_.sizes_input); s != nullptr && s->size() > 0) {
      ONNXFLOW_ASSIGN_OR_RETURN(sizes_in, ReadInts(*s, "sizes"));
      have_sizes = true;
    }
  }
  if (have_scales && have_sizes) return InvalidArgument("only one of 'scales' and 'sizes' may be given");
  if (!have_scales && !have_sizes) return InvalidArgument("one of 'scales' and 'sizes' must be given");

  std::vector<double> scale(static_cast<size_t>(rank), 1.0);
  p.out_shape = p.in_shape;
  if (have_scales) {
    if (scales_in.size() != naxes) {
      return InvalidArgument("'scales' has " + std::to_string(scales_in.size()) + " values, expected " +
                             std::to_string(naxes) + " for input shape " + ShapeToString(p.in_shape));
    }
    for (size_t i = 0; i < naxes; ++i) {
      const double s = scales_in[i];
      if (!(s > 0) || !std::isfinite(s)) {
        return InvalidArgument("'scales' value " + std::to_string(s) + " at " + std::to_string(i) +
                               " is not a positive number");
      }
      const double out = std::floor(static_cast<double>(p.in_shape[axes[i]]) * s);
      if (out > 4e18) return InvalidArgument("'scales' value " + std::to_string(s) + " makes the output too large");
      scale[axes[i]] = s;
      p.out_shape[axes[i]] = static_cast<int64_t>(out);
    }
    p.float_scale.assign(scale.begin(), scale.end());
  } else {
    if (sizes_in.size() != naxes) {
      return InvalidArgument("'sizes' has " + std::to_string(sizes_in.size()) + " values, expected " +
                             std::to_string(naxes) + " for input shape " + ShapeToString(p.in_shape));
    }
    for (size_t i = 0; i < naxes; ++i) {
      if (sizes_in[i] < 0) return InvalidArgument("'sizes' " + JoinInts(sizes_in) + " has a negative size");
      if (p.in_shape[axes[i]] == 0 && sizes_in[i] > 0) {
        return InvalidArgument("cannot resize empty axis " + std::to_string(axes[i]) + " of input shape " +
                               ShapeToString(p.in_shape) + " to " + std::to_string(sizes_in[i]));
      }
    }
    if (c_.policy == AspectPolicy::kStretch) {
      for (size_t i = 0; i < naxes; ++i) {
        const int64_t in = p.in_shape[axes[i]];
        p.out_shape[axes[i]] = sizes_in[i];
        scale[axes[i]] = in == 0 ? 1.0 : static_cast<double>(sizes_in[i]) / static_cast<double>(in);
      }
      p.from_sizes = true;
      p.float_scale.assign(static_cast<size_t>(rank), 1.0f);
      for (size_t i = 0; i < naxes; ++i) {
        const int64_t in = p.in_shape[axes[i]];
        if (in != 0) p.float_scale[axes[i]] = static_cast<float>(sizes_in[i]) / static_cast<float>(in);
      }
    } else {
      double s = c_.policy == AspectPolicy::kNotLarger ? std::numeric_limits<double>::max()
                                                        : std::numeric_limits<double>::lowest();
      for (size_t i = 0; i < naxes; ++i) {
        const int64_t in = p.in_shape[axes[i]];
        if (in == 0) continue;
        const double r = static_cast<double>(sizes_in[i]) / static_cast<double>(in);
        s = c_.policy == AspectPolicy::kNotLarger ? std::min(s, r) : std::max(s, r);
      }
      if (s == std::numeric_limits<double>::max() || s == std::numeric_limits<double>::lowest()) s = 1.0;
      for (size_t i = 0; i < naxes; ++i) {
        const int64_t in = p.in_shape[axes[i]];
        scale[axes[i]] = s;
        p.out_shape[axes[i]] = static_cast<int64_t>(std::floor(s * static_cast<double>(in) + 0.5));
      }
    }
  }
  // Refuse outputs over the tensor limit before building tables as long as the output axes.
  ONNXFLOW_ASSIGN_OR_RETURN(const int64_t out_count, CheckedElementCount(p.out_shape));
  const int64_t element = std::max<int64_t>(static_cast<int64_t>(ElementSize(x.dtype())), 1);
  if (out_count > ctx.run().limits().max_tensor_bytes / element) {
    return ResourceExhausted("the output shape " + ShapeToString(p.out_shape) + " exceeds the tensor size limit");
  }
  if (out_count == 0) return p;  // nothing to sample

  // The region of interest, only read by tf_crop_and_resize.
  std::vector<double> roi_start(static_cast<size_t>(rank), 0.0), roi_end(static_cast<size_t>(rank), 1.0);
  const bool crop = c_.sampling.coordinate == CoordinateMode::kTfCropAndResize;
  if (crop && c_.roi_input >= 0) {
    if (const Tensor* r = ctx.input_tensor(c_.roi_input); r != nullptr && r->size() > 0) {
      ONNXFLOW_ASSIGN_OR_RETURN(std::vector<double> roi, ReadFloats(*r, "roi"));
      if (roi.size() != 2 * naxes) {
        return InvalidArgument("'roi' has " + std::to_string(roi.size()) + " values, expected " +
                               std::to_string(2 * naxes) + " (starts then ends of each resized axis)");
      }
      for (size_t i = 0; i < naxes; ++i) {
        roi_start[axes[i]] = roi[i];
        roi_end[axes[i]] = roi[naxes + i];
      }
    }
  }

  for (int64_t d = 0; d < rank; ++d) {
    const bool same = p.out_shape[d] == p.in_shape[d] && Near(scale[d], 1.0) &&
                      (!crop || (Near(roi_start[d], 0.0) && Near(roi_end[d], 1.0)));
    if (same || p.out_shape[d] == 0) continue;
    if (p.in_shape[d] == 0) {
      return InvalidArgument("cannot resize empty axis " + std::to_string(d) + " of input shape " +
                             ShapeToString(p.in_shape));
    }
    AxisSampling s = c_.sampling;
    s.roi_start = roi_start[d];
    s.roi_end = roi_end[d];
    p.resized.push_back(d);
    p.tables.push_back(BuildAxisTable(s, p.in_shape[d], p.out_shape[d], scale[d]));
  }
  return p;
}

// ---- nearest: one gather over output rows, any element type ----

template <typename T>
T ExtrapolationAs(double v) {
  if constexpr (std::is_same_v<T, std::string>) {
    return std::string();
  } else if constexpr (std::is_same_v<T, bool>) {
    return v != 0;
  } else if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    return T(static_cast<typename T::value_type>(v), 0);
  } else {
    return FromCompute<T>(static_cast<ComputeType<T>>(v));
  }
}

template <typename T>
void NearestGather(const KernelContext& ctx, const Tensor& x, const ResizePlan& p, T extrapolated, Tensor* y) {
  const int64_t rank = static_cast<int64_t>(p.out_shape.size());
  const T* src = x.data<T>();
  T* dst = y->mutable_data<T>();
  if (rank == 0) {
    dst[0] = src[0];
    return;
  }
  const std::vector<int64_t> strides = Strides(p.in_shape);
  // Per axis: the input offset each output coordinate reads, and its extrapolation flags.
  std::vector<std::vector<int64_t>> offset(static_cast<size_t>(rank));
  std::vector<const uint8_t*> outside(static_cast<size_t>(rank), nullptr);
  for (int64_t d = 0; d < rank; ++d) {
    auto& off = offset[d];
    off.resize(static_cast<size_t>(p.out_shape[d]));
    const auto it = std::find(p.resized.begin(), p.resized.end(), d);
    if (it == p.resized.end()) {
      for (int64_t o = 0; o < p.out_shape[d]; ++o) off[o] = o * strides[d];
      continue;
    }
    const AxisTable& t = p.tables[it - p.resized.begin()];
    for (int64_t o = 0; o < p.out_shape[d]; ++o) off[o] = t.index[o * t.taps] * strides[d];
    if (t.any_extrapolate) outside[d] = t.extrapolate.data();
  }
  const int64_t width = p.out_shape[rank - 1];
  const int64_t rows = y->size() / width;
  const int64_t* last = offset[rank - 1].data();
  const uint8_t* last_outside = outside[rank - 1];
  // The last axis kept whole (a channels-last image resized in H and W): each row a copy, not a
  // gather (YOLOv8n's 8-bit upsampling to 80 x 80 x 128 channels-last: 0.57 -> 0.05 ms).
  const bool last_whole = std::find(p.resized.begin(), p.resized.end(), rank - 1) == p.resized.end();
  ParallelFor(ctx, rows, width, [&](int64_t begin, int64_t end) {
    std::vector<int64_t> pos(static_cast<size_t>(rank), 0);  // output coordinates of row `r`
    int64_t rest = begin;
    for (int64_t d = rank - 2; d >= 0; --d) {
      pos[d] = rest % p.out_shape[d];
      rest /= p.out_shape[d];
    }
    for (int64_t r = begin; r < end; ++r) {
      int64_t base = 0;
      bool out_of_range = false;
      for (int64_t d = 0; d + 1 < rank; ++d) {
        base += offset[d][pos[d]];
        out_of_range |= outside[d] != nullptr && outside[d][pos[d]] != 0;
      }
      T* row = dst + r * width;
      if (out_of_range) {
        for (int64_t i = 0; i < width; ++i) row[i] = extrapolated;
      } else if (last_outside != nullptr) {
        for (int64_t i = 0; i < width; ++i) row[i] = last_outside[i] ? extrapolated : src[base + last[i]];
      } else if (last_whole) {
        std::copy(src + base, src + base + width, row);
      } else {
        const T* in = src + base;
        for (int64_t i = 0; i < width; ++i) row[i] = in[last[i]];
      }
      for (int64_t d = rank - 2; d >= 0; --d) {  // next row
        if (++pos[d] < p.out_shape[d]) break;
        pos[d] = 0;
      }
    }
  });
}

// ---- linear on float images: ONNX Runtime's bilinear arithmetic (resize_bilinear.h) ----

// A 2-D or NCHW float input resized in its last two axes only, by a mode with a bilinear form.
bool BilinearApplies(const AxisSampling& s, const Tensor& x, const ResizePlan& p) {
  const int64_t rank = x.rank();
  if (s.mode != ResizeMode::kLinear || s.antialias || !BilinearCoordinateSupported(s.coordinate) ||
      x.dtype() != DataType::kFloat || p.float_scale.empty() || (rank != 2 && rank != 4)) {
    return false;
  }
  for (int64_t d : p.resized) {
    if (d < rank - 2) return false;
    // ONNX Runtime's align_corners divides by the output length, the spec by the fractional one
    // (scale * input length): they agree when sizes were given or that is a whole number.
    if (s.coordinate == CoordinateMode::kAlignCorners && !p.from_sizes &&
        static_cast<double>(p.float_scale[d]) * static_cast<double>(p.in_shape[d]) !=
            static_cast<double>(p.out_shape[d])) {
      return false;
    }
  }
  constexpr int64_t kIndexLimit = int64_t{1} << 31;  // the row gathers index with int32
  return p.in_shape[rank - 1] < kIndexLimit && p.in_shape[rank - 2] < kIndexLimit;
}

void ResizeBilinear(const KernelContext& ctx, const AxisSampling& s, const Tensor& x, const ResizePlan& p,
                    Tensor* y) {
  const int64_t rank = x.rank();
  const int64_t ih = p.in_shape[rank - 2], iw = p.in_shape[rank - 1];
  const int64_t oh = p.out_shape[rank - 2], ow = p.out_shape[rank - 1];
  const int64_t planes = rank == 4 ? p.in_shape[0] * p.in_shape[1] : 1;
  const BilinearAxis rows = BuildBilinearAxis(s.coordinate, ih, oh, p.float_scale[rank - 2]);
  const BilinearAxis cols = BuildBilinearAxis(s.coordinate, iw, ow, p.float_scale[rank - 1]);
  const float* src = x.data<float>();
  float* dst = y->mutable_data<float>();
  // About 8 operations per output, four of them gathers.
  ParallelFor(ctx, planes * oh, ow * 8, [&](int64_t begin, int64_t end) {
    for (int64_t item = begin; item < end; ++item) {
      const int64_t r = item % oh;
      const float* plane = src + item / oh * ih * iw;
      BilinearRowF32(plane + rows.lo[r] * iw, plane + rows.hi[r] * iw, rows.w_lo[r], rows.w_hi[r], cols,
                     dst + item * ow);
    }
  });
}

// ---- linear / cubic: separable passes in a working type ----

// One pass along an axis: [outer, in_d, inner] -> [outer, out_d, inner].
template <typename C>
void ResizeAxis(const KernelContext& ctx, const C* src, C* dst, int64_t outer, int64_t in_d, int64_t out_d,
                int64_t inner, const AxisTable& t, C extrapolated) {
  const int64_t taps = t.taps;
  const std::vector<C> w(t.weight.begin(), t.weight.end());
  const int64_t* idx = t.index.data();
  const uint8_t* outside = t.any_extrapolate ? t.extrapolate.data() : nullptr;
  if (inner == 1) {
    // The last axis: a short gather-dot per output element.
    ParallelFor(ctx, outer, out_d * taps, [&](int64_t begin, int64_t end) {
      for (int64_t ou = begin; ou < end; ++ou) {
        const C* in = src + ou * in_d;
        C* out = dst + ou * out_d;
        for (int64_t o = 0; o < out_d; ++o) {
          if (outside != nullptr && outside[o]) {
            out[o] = extrapolated;
            continue;
          }
          const int64_t* i = idx + o * taps;
          const C* wo = w.data() + o * taps;
          C acc = 0;
          for (int64_t k = 0; k < taps; ++k) acc += wo[k] * in[i[k]];
          out[o] = acc;
        }
      }
    });
    return;
  }
  ParallelFor(ctx, outer * out_d, taps * inner, [&](int64_t begin, int64_t end) {
    std::vector<const C*> rows(static_cast<size_t>(taps));
    for (int64_t item = begin; item < end; ++item) {
      const int64_t ou = item / out_d;
      const int64_t o = item % out_d;
      C* out = dst + item * inner;
      if (outside != nullptr && outside[o]) {
        std::fill(out, out + inner, extrapolated);
        continue;
      }
      for (int64_t k = 0; k < taps; ++k) rows[k] = src + (ou * in_d + idx[o * taps + k]) * inner;
      WeightedRowSum(rows.data(), w.data() + o * taps, taps, inner, out);
    }
  });
}

template <typename T>
T SaturateInt(double v) {
  v = std::nearbyint(v);
  if (std::isnan(v)) return T(0);
  if (v <= static_cast<double>(std::numeric_limits<T>::lowest())) return std::numeric_limits<T>::lowest();
  if (v >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
  return static_cast<T>(v);
}

template <typename T>
void Interpolate(const KernelContext& ctx, const Tensor& x, const ResizePlan& p, double extrapolation, Tensor* y) {
  using C = std::conditional_t<std::is_same_v<T, double> || std::is_integral_v<T>, double, float>;
  constexpr bool kDirect = std::is_same_v<T, C>;
  std::vector<C> converted;
  const C* src = nullptr;
  if constexpr (kDirect) {
    src = x.data<T>();
  } else {
    const T* in = x.data<T>();
    converted.resize(static_cast<size_t>(x.size()));
    for (size_t i = 0; i < converted.size(); ++i) converted[i] = static_cast<C>(ToCompute(in[i]));
    src = converted.data();
  }
  std::vector<C> buffers[2];
  int next = 0;
  Shape cur = p.in_shape;
  for (size_t pass = 0; pass < p.resized.size(); ++pass) {
    const int64_t d = p.resized[pass];
    const int64_t outer = SizeToDim(cur, d);
    const int64_t inner = SizeFromDim(cur, d + 1);
    const int64_t in_d = cur[d];
    const int64_t out_d = p.out_shape[d];
    C* dst = nullptr;
    if (kDirect && pass + 1 == p.resized.size()) {
      dst = reinterpret_cast<C*>(y->mutable_data<T>());
    } else {
      buffers[next].resize(static_cast<size_t>(outer * out_d * inner));
      dst = buffers[next].data();
      next ^= 1;
    }
    ResizeAxis<C>(ctx, src, dst, outer, in_d, out_d, inner, p.tables[pass], static_cast<C>(extrapolation));
    src = dst;
    cur[d] = out_d;
  }
  if constexpr (!kDirect) {
    T* out = y->mutable_data<T>();
    const int64_t n = y->size();
    for (int64_t i = 0; i < n; ++i) {
      if constexpr (std::is_integral_v<T>) {
        out[i] = SaturateInt<T>(src[i]);
      } else {
        out[i] = FromCompute<T>(static_cast<ComputeType<T>>(src[i]));
      }
    }
  }
}

Status ResizeKernel::Compute(KernelContext& ctx) const {
  ONNXFLOW_ASSIGN_OR_RETURN(const Tensor* x, ctx.RequireTensor(0));
  ONNXFLOW_ASSIGN_OR_RETURN(ResizePlan plan, MakePlan(ctx, *x));
  if (plan.resized.empty() && plan.out_shape == x->shape()) {
    ctx.SetOutput(0, *x);  // nothing to resize: share the input
    return Status::Ok();
  }
  // Every path below writes each output element (strings come zeroed all the same).
  ONNXFLOW_ASSIGN_OR_RETURN(Tensor * y, ctx.AllocateUninitialized(0, x->dtype(), plan.out_shape));
  if (y->size() == 0) return Status::Ok();
  if (c_.sampling.mode == ResizeMode::kNearest) {
    return DispatchType<ONNXFLOW_ALL_TYPES, std::complex<float>, std::complex<double>>(x->dtype(), [&](auto tag) {
      using T = decltype(tag);
      NearestGather<T>(ctx, *x, plan, ExtrapolationAs<T>(c_.extrapolation_value), y);
      return Status::Ok();
    });
  }
  if (BilinearApplies(c_.sampling, *x, plan)) {
    ResizeBilinear(ctx, c_.sampling, *x, plan, y);
    return Status::Ok();
  }
  return DispatchType<ONNXFLOW_NUMERIC_TYPES>(x->dtype(), [&](auto tag) {
    using T = decltype(tag);
    Interpolate<T>(ctx, *x, plan, c_.extrapolation_value, y);
    return Status::Ok();
  });
}

}  // namespace

ONNXFLOW_REGISTRAR Status RegisterResize(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(
      registry.Register(kOnnxDomain, "Resize", 10, kOpenEnded, [](const KernelInfo& info) {
        return ResizeKernel::CreateResize(info);
      }));
  return registry.Register(kOnnxDomain, "Upsample", 7, kOpenEnded,
                           [](const KernelInfo& info) { return ResizeKernel::CreateUpsample(info); });
}

}  // namespace image
}  // namespace onnxflow
