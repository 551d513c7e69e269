// The output geometry of ConvTranspose (output_shape, output_padding, auto_pad, pads, strides,
// dilations, groups) for one input and weight shape, checked against overflow: shared by the plain
// kernel (conv_transpose.cc) and the blocked one (ops/blocked/blocked_conv_transpose.cc).
#pragma once

#include <cstdint>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/math/conv_geometry.h"

namespace onnxflow {

struct TransposeGeometry {
  int64_t batch = 0, in_channels = 0, out_channels = 0, group = 1;
  std::vector<int64_t> in_spatial, out_spatial, kernel, strides, dilations, pads_begin;
  int64_t in_size() const;
  int64_t out_size() const;
  int64_t kernel_size() const;
};

// ConvTranspose's attributes besides Conv's.
struct TransposeAttributes {
  ConvAttributes conv;
  std::vector<int64_t> output_padding;  // empty: all 0
  std::vector<int64_t> output_shape;    // empty: from the pads (spatial, or [N, C, spatial...])
};

Result<TransposeAttributes> ParseTransposeAttributes(const KernelInfo& info);

// X [N, C, D1..Dn], W [C, M/group, k1..kn]. Errors name the attribute that does not fit.
Result<TransposeGeometry> ComputeTransposeGeometry(const TransposeAttributes& attrs, const Shape& x, const Shape& w);

// Python-style floor division (total padding may be negative when output_shape asks for more).
inline int64_t FloorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }

}  // namespace onnxflow
