#include "ops/random/register.h"

#include "ops/random/kernels.h"

namespace onnxflow {

Status RegisterRandomKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(random_ops::RegisterRandomTensorOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(random_ops::RegisterBernoulli(registry));
  ONNXFLOW_RETURN_IF_ERROR(random_ops::RegisterMultinomial(registry));
  return Status::Ok();
}

}  // namespace onnxflow
