#include "ops/blocked/register.h"

#include "ops/blocked/blocked_batch_norm.h"
#include "ops/blocked/blocked_conv.h"
#include "ops/blocked/blocked_conv_transpose.h"
#include "ops/blocked/blocked_depthwise.h"
#include "ops/blocked/blocked_group_norm.h"
#include "ops/blocked/blocked_pad.h"
#include "ops/blocked/blocked_pool.h"
#include "ops/blocked/blocked_resize.h"
#include "ops/blocked/reorder.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterBlockedKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterBlockedBatchNorm(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBlockedConv(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBlockedConvTranspose(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBlockedDepthwiseConv(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBlockedGroupNorm(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBlockedPad(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBlockedPools(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBlockedResize(registry));
  return RegisterBlockedReorders(registry);
}

}  // namespace onnxflow
