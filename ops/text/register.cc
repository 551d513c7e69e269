#include "ops/text/register.h"

#include "ops/text/string_ops.h"

namespace onnxflow {

Status RegisterTextKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterStringConcat(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterStringSplit(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterStringNormalizer(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterRegexFullMatch(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterTfIdfVectorizer(registry));
  return Status::Ok();
}

}  // namespace onnxflow
