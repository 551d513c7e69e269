#include "ops/nn/register.h"

#include "ops/nn/batch_norm.h"
#include "ops/nn/dropout.h"
#include "ops/nn/instance_group_norm.h"
#include "ops/nn/layer_norm.h"
#include "ops/nn/loss.h"
#include "ops/nn/norm_ops.h"
#include "ops/nn/optimizers.h"
#include "ops/nn/pool.h"
#include "ops/nn/softmax.h"

namespace onnxflow {

Status RegisterNnKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterPools(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterGlobalPools(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterMaxUnpool(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterMaxRoiPool(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBatchNorm(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterInstanceGroupNorm(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterLayerNorm(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterLrn(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterLpNormalization(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterMeanVarianceNorm(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSoftmaxOps(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterDropout(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterLosses(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterOptimizers(registry));
  return Status::Ok();
}

}  // namespace onnxflow
