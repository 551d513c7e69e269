#include "ops/controlflow/register.h"

#include "ops/controlflow/kernels.h"

namespace onnxflow {

Status RegisterControlflowKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterIf(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterLoop(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterScan(registry));
  return Status::Ok();
}

}  // namespace onnxflow
