#include "ops/sequence/register.h"

#include "ops/sequence/sequence_util.h"

namespace onnxflow {

Status RegisterSequenceKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterSequenceBasics(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSequenceTensorOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSequenceMap(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterOptionalOps(registry));
  return Status::Ok();
}

}  // namespace onnxflow
