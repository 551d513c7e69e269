// The runtime's side of custom operators (include/onnxflow/custom_op.h): the kernel registry a
// CustomOpSet stands for, with each host kernel behind an OpKernel adapter.
#pragma once

#include "include/onnxflow/custom_op.h"
#include "ops/framework/registry.h"

namespace onnxflow {

class CustomOpSetAccess {
 public:
  // The built-in kernels and the set's, built on first use and shared by every session of the set.
  static Result<const KernelRegistry*> Registry(const CustomOpSet& set);
};

}  // namespace onnxflow
