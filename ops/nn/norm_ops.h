// Registration of the smaller normalization ops: LRN (lrn.cc), LpNormalization
// (lp_normalization.cc), MeanVarianceNormalization (mean_variance_norm.cc).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterLrn(KernelRegistry& registry);
Status RegisterLpNormalization(KernelRegistry& registry);
Status RegisterMeanVarianceNorm(KernelRegistry& registry);

}  // namespace onnxflow
