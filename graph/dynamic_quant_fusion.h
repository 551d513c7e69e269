// ONNX Runtime's dynamic-int8 MatMul, five nodes, as one com.microsoft DynamicQuantizeMatMul:
//   DynamicQuantizeLinear(x) -> (x_q, x_scale, x_zero)
//   MatMulInteger(x_q, W, x_zero[, w_zero]) -> Cast(to float) -> Mul(by x_scale * w_scale) [-> Add(bias)]
// The fused kernel quantizes x on the fly and dequantizes in the GEMM's epilogue (ops/math/quantized.cc):
// no int32 tensor, no separate passes for Cast, Mul and Add. Internal to graph/.
#pragma once

#include <vector>

#include "graph/rewrite.h"

namespace onnxflow::graph {

// A FusionRule (fusion_util.h) anchored at the MatMulInteger.
std::optional<Patch> FuseDynamicQuantMatMul(Rewriter& r, NodeGraph::Id id);

// The same model form's convolutions keep their ConvInteger; what follows it,
//   Cast(to float) -> Mul(by x_scale * w_scale, one value) [-> Add(bias per channel)] [-> Relu]
// becomes one com.onnxflow DequantizeAccumulator (ops/quant/dequantize_accumulator.h): one pass
// and one float tensor instead of four, with the four ops' values bit for bit. Anchored at the Cast.
std::optional<Patch> FuseConvIntegerTail(Rewriter& r, NodeGraph::Id id);

}  // namespace onnxflow::graph
