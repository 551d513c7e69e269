// The random family's kernels, one registration function per file, called by register.cc.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {
namespace random_ops {

Status RegisterRandomTensorOps(KernelRegistry& registry);  // random_tensor.cc: RandomUniform/Normal(+Like)
Status RegisterBernoulli(KernelRegistry& registry);        // bernoulli.cc
Status RegisterMultinomial(KernelRegistry& registry);      // multinomial.cc

}  // namespace random_ops
}  // namespace onnxflow
