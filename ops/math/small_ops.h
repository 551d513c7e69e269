// Det (11, 22), Col2Im (18), CausalConvWithState (27), Einsum (12), DeformConv (19, 22): the smaller ops of the family.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterDetKernels(KernelRegistry& registry);
Status RegisterCol2ImKernels(KernelRegistry& registry);
Status RegisterCausalConvKernels(KernelRegistry& registry);
Status RegisterEinsumKernels(KernelRegistry& registry);
Status RegisterDeformConvKernels(KernelRegistry& registry);

}  // namespace onnxflow
