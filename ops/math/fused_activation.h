// The com.onnxflow fused ops (FusedConv, FusedGemm, FusedMatMul) carry their epilogue activation
// as attributes: `activation` (a string naming the op) with `activation_alpha`/`activation_beta`.
#pragma once

#include "ops/framework/kernel_info.h"
#include "ops/framework/registry.h"  // kOnnxflowDomain
#include "ops/math/gemm.h"

namespace onnxflow {

inline Result<ActivationSpec> ParseFusedActivation(const KernelInfo& info) {
  return ParseActivation(info.GetString("activation", ""), info.has_attribute("activation_alpha"),
                         info.GetFloat("activation_alpha", 0.0f), info.has_attribute("activation_beta"),
                         info.GetFloat("activation_beta", 0.0f));
}

}  // namespace onnxflow
