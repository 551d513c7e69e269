// The Reduce* ops (see reduce_ops.cc).
#pragma once

#include <memory>
#include <vector>

#include "ops/framework/registry.h"

namespace onnxflow {

enum class ReduceKind { kSum, kMean, kProd, kMax, kMin, kL1, kL2, kLogSum, kLogSumExp, kSumSquare };

class ReduceKernel : public OpKernel {
 public:
  // `axes_input_since`: the first opset where axes is an input (13 for ReduceSum, 18 otherwise).
  static Result<std::unique_ptr<OpKernel>> Create(const KernelInfo& info, ReduceKind kind, int axes_input_since);
  Status Compute(KernelContext& ctx) const override;

 private:
  ReduceKernel(const KernelInfo& info, ReduceKind kind, int axes_input_since);
  Result<std::vector<int64_t>> Axes(const KernelContext& ctx) const;

  ReduceKind kind_;
  bool keepdims_;
  bool noop_with_empty_axes_;
  bool axes_from_input_;
  std::vector<int64_t> axes_attribute_;
};

}  // namespace onnxflow
