#include "ops/register_all.h"

#include <cstdio>
#include <cstdlib>

#include "ops/blocked/register.h"
#include "ops/elementwise/register.h"
#include "ops/activation/register.h"
#include "ops/math/register.h"
#include "ops/nn/register.h"
#include "ops/reduce/register.h"
#include "ops/tensor/register.h"
#include "ops/cast/register.h"
#include "ops/quant/register.h"
#include "ops/quant_ms/register.h"
#include "ops/random/register.h"
#include "ops/image/register.h"
#include "ops/signal/register.h"
#include "ops/rnn/register.h"
#include "ops/text/register.h"
#include "ops/ml/register.h"
#include "ops/attention/register.h"
#include "ops/controlflow/register.h"
#include "ops/sequence/register.h"
#include "ops/legacy/register.h"
#include "ops/generation/register.h"
#include "ops/ms_misc/register.h"
#include "ops/moe/register.h"
#include "ops/contrib/register.h"

namespace onnxflow {

ONNXFLOW_REGISTRAR Status RegisterAllKernels(KernelRegistry& registry) {
  ONNXFLOW_RETURN_IF_ERROR(RegisterElementwiseKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterActivationKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterMathKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterNnKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterReduceKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterTensorKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterCastKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterQuantKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterQuantMsKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterRandomKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterImageKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSignalKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterRnnKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterTextKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterMlKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterAttentionKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterControlflowKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterSequenceKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterBlockedKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterLegacyKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterGenerationKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterMsMiscKernels(registry));
  ONNXFLOW_RETURN_IF_ERROR(RegisterMoeKernels(registry));
  // Last: the com.microsoft ops wrap kernels the families above registered.
  ONNXFLOW_RETURN_IF_ERROR(RegisterContribKernels(registry));
  return Status::Ok();
}

const KernelRegistry& GlobalKernelRegistry() {
  static const KernelRegistry* registry = [] {
    auto* r = new KernelRegistry();
    Status s = RegisterAllKernels(*r);
    if (!s.ok()) {
      // Only a bug in onnxflow itself (two kernels claiming one version) gets here, and every
      // test run would show it; there is no model input that can cause it.
      std::fprintf(stderr, "onnxflow: kernel registration failed: %s\n", s.ToString().c_str());
      std::abort();
    }
    return r;
  }();
  return *registry;
}

}  // namespace onnxflow
