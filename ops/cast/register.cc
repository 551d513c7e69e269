#include "ops/cast/register.h"

#include "ops/cast/cast.h"

namespace onnxflow {

Status RegisterCastKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterCastOps(registry));
  return Status::Ok();
}

}  // namespace onnxflow
