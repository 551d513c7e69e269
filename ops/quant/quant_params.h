// Where each element of x finds its scale and zero point in QuantizeLinear/DequantizeLinear.
//
// Three granularities, chosen by the scale's shape:
// - per-tensor: the scale is a scalar or has one element;
// - per-axis: the scale is 1-D with x.shape[axis] elements;
// - blocked (block_size > 0): the scale has x's rank and shape except along `axis`, where it has
//   ceil(x.shape[axis] / block_size) entries; each scale covers block_size consecutive elements.
// x is viewed as [outer, D = x.shape[axis], inner]; a "row" is one (outer, d) pair holding `inner`
// consecutive elements, whose parameters either stay the same (per-tensor, per-axis) or advance
// one by one (blocked).
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "include/onnxflow/status.h"
#include "include/onnxflow/tensor.h"

namespace onnxflow {

class QuantLayout {
 public:
  // Validates the scale (and zero point, when given) against x; names the offending input.
  static Result<QuantLayout> Make(const Shape& x_shape, const Tensor& scale, const Tensor* zero_point,
                                  int64_t axis, int64_t block_size);

  int64_t rows() const { return outer_ * dim_; }
  int64_t inner() const { return inner_; }
  // First parameter index used by row r and the step from one element of the row to the next.
  int64_t row_param(int64_t r) const {
    switch (mode_) {
      case Mode::kPerTensor: return 0;
      case Mode::kPerAxis: return r % dim_;
      case Mode::kBlocked: {
        const int64_t o = r / dim_, d = r % dim_;
        return (o * blocks_ + d / block_size_) * inner_;
      }
    }
    return 0;
  }
  int64_t param_step() const { return mode_ == Mode::kBlocked ? 1 : 0; }

  // Calls f(start, count, param, step) for the runs of elements [begin, end) splits into: each
  // run lies within one row, starts at flat index `start` with parameter index `param`, and
  // advances the parameter by `step` (0 or 1) per element. Lets callers split work anywhere.
  template <typename F>
  void ForEachRun(int64_t begin, int64_t end, F&& f) const {
    const int64_t step = param_step();
    int64_t i = begin;
    while (i < end) {
      const int64_t row = i / inner_, offset = i % inner_;
      const int64_t count = std::min(end - i, inner_ - offset);
      f(i, count, row_param(row) + offset * step, step);
      i += count;
    }
  }

 private:
  enum class Mode { kPerTensor, kPerAxis, kBlocked };
  Mode mode_ = Mode::kPerTensor;
  int64_t outer_ = 1, dim_ = 1, inner_ = 1;
  int64_t blocks_ = 1, block_size_ = 1;
};

// The values of a scale or zero-point tensor of any numeric type, as double.
Result<std::vector<double>> ParamsAsDouble(const Tensor& t, const char* input_name);

}  // namespace onnxflow
