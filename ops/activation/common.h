// The per-file registration functions of the activation family (register.cc calls them all).
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

Status RegisterPointwiseActivationKernels(KernelRegistry& registry);  // Relu ... Swish
Status RegisterClipKernels(KernelRegistry& registry);                 // Clip
Status RegisterPReluKernels(KernelRegistry& registry);                // PRelu
Status RegisterSwiGluKernels(KernelRegistry& registry);               // SwiGLU

}  // namespace onnxflow
