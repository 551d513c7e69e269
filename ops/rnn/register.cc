#include "ops/rnn/register.h"

#include "ops/rnn/kernels.h"

namespace onnxflow {

Status RegisterRnnKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(rnn::RegisterRnn(registry));
  ONNXFLOW_RETURN_IF_ERROR(rnn::RegisterGru(registry));
  ONNXFLOW_RETURN_IF_ERROR(rnn::RegisterLstm(registry));
  return Status::Ok();
}

}  // namespace onnxflow
