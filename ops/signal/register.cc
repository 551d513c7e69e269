#include "ops/signal/register.h"

#include "ops/signal/signal_kernels.h"

namespace onnxflow {

Status RegisterSignalKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(signal::RegisterDft(registry));
  ONNXFLOW_RETURN_IF_ERROR(signal::RegisterStft(registry));
  ONNXFLOW_RETURN_IF_ERROR(signal::RegisterWindows(registry));
  return signal::RegisterMelWeightMatrix(registry);
}

}  // namespace onnxflow
