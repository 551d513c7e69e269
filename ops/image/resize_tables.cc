#include "ops/image/resize_tables.h"

#include <algorithm>
#include <cmath>

namespace onnxflow {
namespace image {

Result<ResizeMode> ParseResizeMode(const std::string& s) {
  if (s == "nearest") return ResizeMode::kNearest;
  if (s == "linear" || s == "bilinear" || s == "trilinear") return ResizeMode::kLinear;
  if (s == "cubic" || s == "bicubic") return ResizeMode::kCubic;
  return InvalidArgument("unknown mode '" + s + "' (expected nearest, linear or cubic)");
}

Result<CoordinateMode> ParseCoordinateMode(const std::string& s) {
  if (s == "half_pixel") return CoordinateMode::kHalfPixel;
  if (s == "half_pixel_symmetric") return CoordinateMode::kHalfPixelSymmetric;
  if (s == "pytorch_half_pixel") return CoordinateMode::kPytorchHalfPixel;
  if (s == "align_corners") return CoordinateMode::kAlignCorners;
  if (s == "asymmetric") return CoordinateMode::kAsymmetric;
  if (s == "tf_half_pixel_for_nn") return CoordinateMode::kTfHalfPixelForNn;
  if (s == "tf_crop_and_resize") return CoordinateMode::kTfCropAndResize;
  return InvalidArgument("unknown coordinate_transformation_mode '" + s + "'");
}

Result<NearestMode> ParseNearestMode(const std::string& s) {
  if (s == "round_prefer_floor") return NearestMode::kRoundPreferFloor;
  if (s == "round_prefer_ceil") return NearestMode::kRoundPreferCeil;
  if (s == "floor") return NearestMode::kFloor;
  if (s == "ceil") return NearestMode::kCeil;
  return InvalidArgument("unknown nearest_mode '" + s + "'");
}

double SourceCoordinate(const AxisSampling& s, int64_t o, int64_t input_length, int64_t output_length,
                        double scale) {
  const double x = static_cast<double>(o);
  const double in = static_cast<double>(input_length);
  // The spec's "length_resized" is the fractional length when it comes from a scale.
  const double out_fractional = scale * in;
  switch (s.coordinate) {
    case CoordinateMode::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case CoordinateMode::kHalfPixelSymmetric: {
      const double adjustment = static_cast<double>(output_length) / out_fractional;
      const double offset = in / 2 * (1 - adjustment);
      return offset + (x + 0.5) / scale - 0.5;
    }
    case CoordinateMode::kPytorchHalfPixel:
      return output_length > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordinateMode::kAlignCorners:
      return out_fractional == 1.0 ? 0.0 : x * (in - 1) / (out_fractional - 1);
    case CoordinateMode::kAsymmetric:
      return x / scale;
    case CoordinateMode::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
    case CoordinateMode::kTfCropAndResize:
      if (out_fractional == 1.0) return 0.5 * (s.roi_start + s.roi_end) * (in - 1);
      return s.roi_start * (in - 1) + x * (s.roi_end - s.roi_start) * (in - 1) / (out_fractional - 1);
  }
  return 0.0;
}

namespace {

// Keeps absurd coordinates (tiny scales, huge rois) inside int64 range; they clamp to an edge anyway.
double Bounded(double x) { return std::clamp(x, -1e15, 1e15); }

bool IsInteger(double x) { return x == std::floor(x); }

// The cubic convolution kernel of Keys (1981) with parameter a, at distance |t|.
double CubicKernel(double t, double a) {
  t = std::abs(t);
  if (t <= 1) return ((a + 2) * t - (a + 3)) * t * t + 1;
  if (t < 2) return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a;
  return 0.0;
}

}  // namespace

int64_t NearestIndex(NearestMode mode, double x, double scale) {
  x = Bounded(x);
  if (mode == NearestMode::kSimple) {
    return static_cast<int64_t>(scale < 1.0 ? std::ceil(x) : std::trunc(x));
  }
  if (IsInteger(x)) return static_cast<int64_t>(x);
  const double lo = std::floor(x);
  const double ratio = x - lo;
  const int64_t base = static_cast<int64_t>(lo);
  switch (mode) {
    case NearestMode::kRoundPreferFloor: return ratio <= 0.5 ? base : base + 1;
    case NearestMode::kRoundPreferCeil: return ratio < 0.5 ? base : base + 1;
    case NearestMode::kFloor: return base;
    case NearestMode::kCeil: return base + 1;
    case NearestMode::kSimple: break;
  }
  return base;
}

AxisTable BuildAxisTable(const AxisSampling& s, int64_t input_length, int64_t output_length, double scale) {
  AxisTable table;
  const double filter_scale = s.antialias ? std::min(scale, 1.0) : 1.0;
  // Taps relative to x0 (the input index at or just left of the coordinate) start at `first`.
  int64_t first = 0;
  if (s.mode == ResizeMode::kNearest) {
    table.taps = 1;
  } else if (s.mode == ResizeMode::kLinear) {
    first = static_cast<int64_t>(std::floor(-1.0 / filter_scale)) + 1;
    table.taps = 2 - 2 * first;
  } else {
    first = static_cast<int64_t>(std::floor(-2.0 / filter_scale)) + 1;
    table.taps = 2 - 2 * first;
  }
  const int64_t taps = table.taps;
  table.index.resize(static_cast<size_t>(output_length * taps));
  table.weight.resize(static_cast<size_t>(output_length * taps));
  table.extrapolate.assign(static_cast<size_t>(output_length), 0);
  std::vector<double> w(static_cast<size_t>(taps));
  const int64_t last_index = input_length - 1;

  for (int64_t o = 0; o < output_length; ++o) {
    const double x = Bounded(SourceCoordinate(s, o, input_length, output_length, scale));
    if (s.coordinate == CoordinateMode::kTfCropAndResize && (x < 0 || x > static_cast<double>(last_index))) {
      table.extrapolate[o] = 1;
      table.any_extrapolate = true;
    }
    int64_t* idx = &table.index[o * taps];
    double* wt = &table.weight[o * taps];
    if (s.mode == ResizeMode::kNearest) {
      idx[0] = std::clamp<int64_t>(NearestIndex(s.nearest, x, scale), 0, last_index);
      wt[0] = 1.0;
      continue;
    }
    // Prefer the left neighbour: an integer coordinate sits at ratio 1 of the pixel before it.
    const double x0f = IsInteger(x) ? x - 1 : std::floor(x);
    const double ratio = x - x0f;
    const int64_t x0 = static_cast<int64_t>(x0f);
    double sum = 0;
    for (int64_t k = 0; k < taps; ++k) {
      const double offset = static_cast<double>(first + k);
      double v;
      if (s.mode == ResizeMode::kLinear) {
        v = s.antialias ? std::clamp(1.0 - std::abs((offset - ratio) * filter_scale), 0.0, 1.0)
                        : (k == 0 ? 1.0 - ratio : ratio);
      } else {
        v = CubicKernel((offset - ratio) * filter_scale, s.cubic_a);
      }
      w[k] = v;
      sum += v;
    }
    if (s.antialias && sum != 0) {
      for (auto& v : w) v /= sum;
    }
    if (s.exclude_outside) {
      double kept = 0;
      for (int64_t k = 0; k < taps; ++k) {
        const int64_t i = x0 + first + k;
        if (i < 0 || i > last_index) w[k] = 0;
        kept += w[k];
      }
      if (kept != 0) {
        for (auto& v : w) v /= kept;
      }
    }
    for (int64_t k = 0; k < taps; ++k) {
      idx[k] = std::clamp<int64_t>(x0 + first + k, 0, last_index);
      wt[k] = w[k];
    }
  }
  return table;
}

}  // namespace image
}  // namespace onnxflow
