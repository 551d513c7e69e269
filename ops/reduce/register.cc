#include "ops/reduce/register.h"

#include "ops/reduce/arg_min_max.h"
#include "ops/reduce/cumulative.h"
#include "ops/reduce/reduce_ops.h"
#include "ops/reduce/top_k.h"

namespace onnxflow {

Status RegisterReduceKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterReduceOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterArgMinMax(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterCumulativeOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterTopK(registry));
  return Status::Ok();
}

}  // namespace onnxflow
