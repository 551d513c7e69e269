// Window geometry shared by the pooling ops: kernel, strides, dilations, pads (from the attributes
// or auto_pad) and the output spatial shape, following the ONNX rules (ceil_mode drops a last window
// that would start in the right padding).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"
#include "ops/framework/kernel_info.h"

namespace onnxflow {

// The attributes as written on the node, checked at load.
struct PoolAttributes {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;    // empty: all 1
  std::vector<int64_t> dilations;  // empty: all 1
  std::vector<int64_t> pads;       // empty: all 0; else begins then ends
  std::string auto_pad = "NOTSET";
  bool ceil_mode = false;

  static Result<PoolAttributes> Parse(const KernelInfo& info);
};

// Everything a pooling loop needs for one input shape. Spatial dims only.
struct PoolGeometry {
  int64_t batch = 0, channels = 0;
  std::vector<int64_t> in, out, kernel, strides, dilations, pad_begin, pad_end;
  int64_t in_plane() const;
  int64_t out_plane() const;
  // The taps of one window that can land inside the input (per axis at most the axis), capped at
  // 2^20: a ParallelFor cost that a hostile kernel of 2^40 per axis cannot overflow.
  int64_t taps_estimate() const;
};

// The geometry for input shape [N, C, D1, ...], or an error naming what does not fit.
Result<PoolGeometry> ComputePoolGeometry(const PoolAttributes& attrs, const Shape& input);

// One output's window along one axis: it starts at input position `start`; its taps [lo, hi) land
// inside the input and its first `with_pad` taps inside the padded input (count_include_pad).
// Counted in closed form, not tap by tap: a hostile kernel of 2^40 taps is a division, not a walk.
struct WindowTaps {
  int64_t start = 0, lo = 0, hi = 0, with_pad = 0;
  int64_t inside() const { return hi - lo; }
};
// The window starting at `start` of `kernel` taps `dilation` apart over an axis of `in` positions
// padded by `pad_end` after it; (kernel - 1) * dilation must fit int64 (ComputePoolGeometry checks).
WindowTaps TapsOf(int64_t start, int64_t kernel, int64_t dilation, int64_t in, int64_t pad_end);
// Output `o`'s window along spatial axis `axis` of `g`.
WindowTaps TapsOf(const PoolGeometry& g, size_t axis, int64_t o);

}  // namespace onnxflow
