// ArgMax / ArgMin (see arg_min_max.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

class ArgMinMaxKernel : public OpKernel {
 public:
  ArgMinMaxKernel(const KernelInfo& info, bool is_max);
  Status Compute(KernelContext& ctx) const override;

 private:
  bool is_max_;
  int64_t axis_;
  bool keepdims_;
  bool select_last_index_;
};

}  // namespace onnxflow
