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
};

// The geometry for input shape [N, C, D1, ...], or an error naming what does not fit.
Result<PoolGeometry> ComputePoolGeometry(const PoolAttributes& attrs, const Shape& input);

}  // namespace onnxflow
