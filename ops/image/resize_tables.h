// Per-axis sampling tables for Resize / Upsample.
//
// Resize is separable: every output coordinate along one axis reads a fixed number of input
// positions ("taps") with fixed weights, whatever the other coordinates are. So a call builds one
// table per resized axis (source index and weight of every tap of every output position) and the
// kernels only gather and multiply. All coordinate arithmetic is in double, as the ONNX reference
// does it, so the choice of taps matches at ties.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"

namespace onnxflow {
namespace image {

enum class ResizeMode { kNearest, kLinear, kCubic };

enum class CoordinateMode {
  kHalfPixel,
  kHalfPixelSymmetric,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
  kTfCropAndResize,
};

// kSimple is the rule of Upsample and Resize-10: truncate when upsampling, ceil when downsampling.
enum class NearestMode { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil, kSimple };

Result<ResizeMode> ParseResizeMode(const std::string& s);
Result<CoordinateMode> ParseCoordinateMode(const std::string& s);
Result<NearestMode> ParseNearestMode(const std::string& s);

struct AxisSampling {
  ResizeMode mode = ResizeMode::kNearest;
  CoordinateMode coordinate = CoordinateMode::kHalfPixel;
  NearestMode nearest = NearestMode::kRoundPreferFloor;
  double cubic_a = -0.75;
  bool exclude_outside = false;
  bool antialias = false;
  double roi_start = 0.0;  // tf_crop_and_resize only
  double roi_end = 1.0;
};

// The taps of one axis: output position o reads input indices index[o * taps + k] (already clamped
// into [0, input_length)) with weights weight[o * taps + k]; extrapolate[o] marks positions that take
// the extrapolation value instead (tf_crop_and_resize outside the input).
struct AxisTable {
  int64_t taps = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<uint8_t> extrapolate;
  bool any_extrapolate = false;
};

// The source coordinate of output position `o` (before tap selection). `scale` is the axis scale
// factor; the fractional output length is scale * input_length, as the spec's formulas use it.
double SourceCoordinate(const AxisSampling& s, int64_t o, int64_t input_length, int64_t output_length,
                        double scale);

// The nearest input index for source coordinate x (not yet clamped).
int64_t NearestIndex(NearestMode mode, double x, double scale);

// Builds the table of one axis. input_length must be > 0 when output_length > 0.
AxisTable BuildAxisTable(const AxisSampling& s, int64_t input_length, int64_t output_length, double scale);

}  // namespace image
}  // namespace onnxflow
