// ONNX Runtime's own operators (domain com.microsoft, and the default-domain LayerNormalization and
// SimplifiedLayerNormalization it registers below opset 17): what files saved by ONNX Runtime and
// by exporters that target it contain.
#pragma once

#include "ops/framework/registry.h"

namespace onnxflow {

// Call after the other families: several of these wrap kernels registered there (Conv, Gemm,
// LayerNormalization, Trilu, Range).
Status RegisterContribKernels(KernelRegistry& registry);

}  // namespace onnxflow
